import type { Metadata } from 'next';
import { Suspense } from 'react';
import { JobsView } from './jobs-view';

/** The tab's title: several tabs of the console are told apart. */
export const metadata: Metadata = { title: 'Jobs' };

export default function JobsPage() {
  return (
    <Suspense fallback={<p className="text-zinc-500">Loading…</p>}>
      <JobsView />
    </Suspense>
  );
}
