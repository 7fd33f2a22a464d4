import type { Metadata } from 'next';
import { Suspense } from 'react';
import { AuditView } from './audit-view';

/** The tab's title: several tabs of the console are told apart. */
export const metadata: Metadata = { title: 'Audit log' };

export default function AuditPage() {
  return (
    <Suspense fallback={<p className="text-zinc-500">Loading…</p>}>
      <AuditView />
    </Suspense>
  );
}
