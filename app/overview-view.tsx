'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { StatusCounts } from '@/components/stats/status-counts';
import { enqueueJob, statsQuery } from '@/lib/api/stats';
import { statsKeys } from '@/lib/api/keys';

const age = (ms: number | null) => (ms === null ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

export function OverviewView() {
  const stats = useQuery(statsQuery(1000));
  const qc = useQueryClient();
  const [last, setLast] = useState<string | null>(null);
  const enqueue = useMutation({
    mutationFn: () => enqueueJob({ type: 'demo.sleep', payload: { ms: 3000 } }),
    onSuccess: (r) => {
      setLast(`Enqueued job #${r.id}`);
      void qc.invalidateQueries({ queryKey: statsKeys.all });
    },
  });

  if (stats.isError) {
    return (
      <p role="alert" className="rounded border border-red-300 bg-red-50 p-4 text-red-800 dark:border-red-800 dark:bg-red-950 dark:text-red-200">
        Cannot load stats: {stats.error.message}. Is the database reachable? The console retries every second.
      </p>
    );
  }
  const s = stats.data;
  return (
    <div className="space-y-6">
      <div className="flex items-center justify-between">
        <h1 className="text-xl font-semibold">Overview</h1>
        <div className="flex items-center gap-3">
          {last && <span className="text-sm text-zinc-500" role="status">{last}</span>}
          <button
            type="button"
            onClick={() => enqueue.mutate()}
            disabled={enqueue.isPending}
            className="rounded bg-zinc-900 px-3 py-1.5 text-sm text-white hover:bg-zinc-700 disabled:opacity-50 dark:bg-zinc-100 dark:text-zinc-900"
          >
            Enqueue demo job
          </button>
        </div>
      </div>
      {s ? (
        <>
          <StatusCounts counts={s.counts} />
          <dl className="grid grid-cols-3 gap-3 text-sm">
            <div>
              <dt className="text-zinc-500">Oldest due job waiting</dt>
              <dd className="tabular" data-testid="oldest-queued">{age(s.oldestQueuedAgeMs)}</dd>
            </div>
            <div>
              <dt className="text-zinc-500">Running with an expired lease</dt>
              <dd className="tabular">{s.runningExpired}</dd>
            </div>
            <div>
              <dt className="text-zinc-500">Workers alive</dt>
              <dd className="tabular" data-testid="workers-alive">{s.workersAlive}</dd>
            </div>
          </dl>
        </>
      ) : (
        <p className="text-zinc-500">Loading…</p>
      )}
    </div>
  );
}
