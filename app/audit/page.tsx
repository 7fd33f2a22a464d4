import { Suspense } from 'react';
import { AuditView } from './audit-view';

export default function AuditPage() {
  return (
    <Suspense fallback={<p className="text-zinc-500">Loading…</p>}>
      <AuditView />
    </Suspense>
  );
}
