'use client';
import { useQuery } from '@tanstack/react-query';
import { WorkerTable } from '@/components/workers/worker-table';
import { EmptyState, ErrorState } from '@/components/ui/states';
import { useLive } from '@/lib/api/live';
import { workersQuery } from '@/lib/api/workers';
import { duration } from '@/lib/ui/format';
import { useRefreshInterval } from '@/lib/ui/refresh';
import { useDbNow } from '@/lib/ui/use-now';

export function WorkersView() {
  const interval = useRefreshInterval();
  const live = useLive({ workers: true }, interval);
  const q = useQuery(workersQuery(live ? false : interval));
  const now = useDbNow();
  return (
    <div className="space-y-4">
      <h1 className="text-xl font-semibold">Workers</h1>
      {q.data && (
        <p className="text-sm text-zinc-600 dark:text-zinc-300">
          One row per worker process. A worker is <strong>stale</strong> when it has not reported for longer than a lease ({duration(q.data.staleAfterMs)}):
          its jobs are moved on by the recover sweep.
        </p>
      )}
      {q.isError && !q.data ? (
        <ErrorState title="Cannot load workers" message={q.error.message} onRetry={() => void q.refetch()} />
      ) : !q.data ? (
        <p className="text-zinc-500">Loading…</p>
      ) : q.data.workers.length === 0 ? (
        <EmptyState title="No worker has ever reported">
          Start workers with <code>npm start</code> (console and workers) or <code>npm run worker -- --processes 2 --concurrency 10</code>.
        </EmptyState>
      ) : (
        <WorkerTable workers={q.data.workers} nowMs={now} staleAfterMs={q.data.staleAfterMs} readAt={q.data.dbNow} />
      )}
    </div>
  );
}
