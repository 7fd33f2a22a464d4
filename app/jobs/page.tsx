import { Suspense } from 'react';
import { JobsView } from './jobs-view';

export default function JobsPage() {
  return (
    <Suspense fallback={<p className="text-zinc-500">Loading…</p>}>
      <JobsView />
    </Suspense>
  );
}
