'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '@/components/actions/confirm-dialog';
import { UserText } from '@/components/ui/user-text';
import { WorkerTable } from '@/components/workers/worker-table';
import { EmptyState, ErrorState } from '@/components/ui/states';
import { useLive } from '@/lib/api/live';
import { meQuery } from '@/lib/api/auth';
import { workerKeys } from '@/lib/api/keys';
import { setWorkerQuiet, workersQuery } from '@/lib/api/workers';
import { queuesOnlyServedBy } from '@/lib/ui/last-consumer';
import { roleRefusal } from '@/lib/ui/role-gate';
import { duration, int } from '@/lib/ui/format';
import { useRefreshInterval } from '@/lib/ui/refresh';
import { useDbNow } from '@/lib/ui/use-now';

export function WorkersView() {
  const interval = useRefreshInterval();
  const live = useLive({ workers: true }, interval);
  const q = useQuery(workersQuery(live ? false : interval));
  const now = useDbNow();
  const qc = useQueryClient();
  const role = useQuery(meQuery()).data?.role;
  // Quiet asks first, with a reason for the audit log, as every other write does (a deploy's
  // first step, on a process that may hold long jobs); Resume, which undoes it, does not.
  const [asking, setAsking] = useState<string | null>(null);
  const quiet = useMutation({
    mutationFn: ({ workerId, quiet, reason }: { workerId: string; quiet: boolean; reason?: string }) => setWorkerQuiet(workerId, quiet, reason),
    onSuccess: () => setAsking(null),
    onSettled: () => void qc.invalidateQueries({ queryKey: workerKeys.all }),
  });
  const alone = asking && q.data ? queuesOnlyServedBy(q.data.workers, asking) : [];
  return (
    <div className="space-y-4">
      <h1 className="text-xl font-semibold">Workers</h1>
      {q.data && (
        <p className="text-sm text-zinc-600 dark:text-zinc-300">
          One row per worker process. A worker is <strong>stale</strong> when it has not reported for longer than a lease ({duration(q.data.staleAfterMs)}):
          its jobs are moved on by the recover sweep. A <strong>quiet</strong> worker claims no new job (an operator quieted it, before
          maintenance or a deploy); the jobs in hand finish. It reads the request with its next heartbeat.
        </p>
      )}
      {quiet.isError && quiet.variables && !asking && (
        <ErrorState title={`Could not ${quiet.variables.quiet ? 'quiet' : 'resume'} the worker`} message={quiet.error.message} onRetry={() => quiet.mutate(quiet.variables!)} />
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
        <WorkerTable
          workers={q.data.workers}
          nowMs={now}
          staleAfterMs={q.data.staleAfterMs}
          readAt={q.data.dbNow}
          onQuiet={(workerId, q) => {
            quiet.reset();
            if (q) setAsking(workerId);
            else quiet.mutate({ workerId, quiet: false });
          }}
          quietWhy={roleRefusal('worker.quiet', role)}
          busyWorker={quiet.isPending ? quiet.variables?.workerId : undefined}
        />
      )}
      {q.data && q.data.total > q.data.workers.length && (
        <p className="text-sm text-zinc-600 dark:text-zinc-300" data-testid="workers-left-out">
          The first {int(q.data.workers.length)} of {int(q.data.total)} worker processes on file are listed: the live
          ones, then the silent ones, then those that ended latest. The other {int(q.data.total - q.data.workers.length)} are left
          out (an ended process&apos;s row is kept a week); their jobs&apos; attempts name them.
        </p>
      )}
      {asking && (
        <ConfirmDialog
          title="Quiet worker"
          confirmLabel="Quiet worker"
          pending={quiet.isPending}
          error={quiet.isError ? quiet.error.message : null}
          onConfirm={(reason) => quiet.mutate({ workerId: asking, quiet: true, reason })}
          onClose={() => setAsking(null)}
        >
          <span className="font-mono wrap-anywhere"><UserText text={asking} /></span> claims no new job from its next heartbeat; the jobs in
          hand finish and jobs it holds claimed ahead go back to their queues. Resume undoes it.
          {alone.length > 0 && (
            <span className="mt-2 block font-medium text-red-700 dark:text-red-300" data-testid="quiet-last-consumer">
              No other live worker claims from {alone.length === 1 ? 'queue' : 'queues'}{' '}
              {alone.map((name, k) => (
                <span key={name}>
                  {k > 0 && ', '}
                  <UserText text={name} />
                </span>
              ))}
              : {alone.length === 1 ? 'its' : 'their'} jobs will wait until this worker is resumed or another one starts.
            </span>
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}
