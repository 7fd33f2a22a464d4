'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { Badge } from '@/components/ui/badge';
import { EmptyState, ErrorState } from '@/components/ui/states';
import { PageTable } from '@/components/ui/table';
import { UserText } from '@/components/ui/user-text';
import { schedulesQuery } from '@/lib/api/schedules';
import { statsQuery } from '@/lib/api/stats';
import type { ScheduleDto } from '@/lib/api/types';
import { ago, dateTime, duration, ms } from '@/lib/ui/format';
import { useRefreshInterval } from '@/lib/ui/refresh';
import { useDbNow } from '@/lib/ui/use-now';

/** The recurring jobs: when each ticks next, when it last did, and the job that tick made. */
export function SchedulesView() {
  const interval = useRefreshInterval();
  const q = useQuery(schedulesQuery(interval));
  const now = useDbNow();
  // Which queues a live worker consumes (the overview's shared snapshot): a schedule whose
  // queue nobody consumes still ticks (any worker enqueues), and its jobs pile up.
  const stats = useQuery(statsQuery(15_000));
  const consumers = (queue: string): number | null => {
    if (!stats.data) return null;
    const listed = stats.data.queues.find((x) => x.queue === queue);
    // Every queue a worker consumed within the hour is listed, unless the list was cut
    // (at QUEUES_MAX, 200, by name).
    return listed ? listed.workersAlive : stats.data.queuesTruncated || stats.data.queues.length >= 200 ? null : 0;
  };
  return (
    <div className="space-y-4">
      <h1 className="text-xl font-semibold">Schedules</h1>
      <p className="text-sm text-zinc-600 dark:text-zinc-300">
        Recurring jobs. Every worker process looks for due ticks; exactly one enqueues each tick. Ticks missed while no worker ran
        collapse into one run.
      </p>
      {q.isError && !q.data ? (
        <ErrorState title="Cannot load the schedules" message={q.error.message} onRetry={() => void q.refetch()} />
      ) : !q.data ? (
        <p className="text-zinc-500">Loading…</p>
      ) : q.data.schedules.length === 0 ? (
        <EmptyState title="No schedules">
          Add one with <code>npx leasehold schedule add nightly-report --cron &apos;0 3 * * *&apos; --type demo.noop</code>, or define
          them in code for <code>npm run worker</code>.
        </EmptyState>
      ) : (
        <ScheduleTable schedules={q.data.schedules} nowMs={now} consumers={consumers} />
      )}
    </div>
  );
}

function ScheduleTable({ schedules, nowMs, consumers }: { schedules: ScheduleDto[]; nowMs: number; consumers(queue: string): number | null }) {
  return (
    <PageTable testid="schedule-table" headings={['Name', 'Cron', 'Job', 'Next tick', 'Last tick']}>
      {schedules.map((s) => {
        const next = ms(s.nextRunAt)! - nowMs;
        return (
          <tr key={s.name} className="border-b border-zinc-100 last:border-0 dark:border-zinc-800/60" data-testid={`schedule-${s.name}`}>
            <td className="break-all px-3 py-2 font-medium">
              <UserText text={s.name} /> {!s.enabled && <Badge>disabled</Badge>}
            </td>
            <td className="whitespace-nowrap px-3 py-2 font-mono text-xs">
              <UserText text={s.cron} />
              <span className="text-zinc-500" data-testid="timezone">
                {' ('}
                <UserText text={s.timezone} />)
              </span>
            </td>
            <td className="break-all px-3 py-2 text-xs">
              <span className="font-mono">
                <UserText text={s.type} />
              </span>{' '}
              on{' '}
              <Link href={`/jobs?queue=${encodeURIComponent(s.queue)}&type=${encodeURIComponent(s.type)}`} className="hover:underline">
                <UserText text={s.queue} />
              </Link>
              <span className="text-zinc-500"> · {s.maxAttempts} attempts</span>
              {s.enabled && consumers(s.queue) === 0 && (
                <p className="mt-1 text-red-700 dark:text-red-400" data-testid="no-consumer">
                  No live worker consumes this queue: each tick&apos;s job waits until one starts.
                </p>
              )}
            </td>
            <td className="tabular whitespace-nowrap px-3 py-2 text-xs" title={dateTime(s.nextRunAt)} data-testid="next-tick">
              {!s.enabled ? '—' : next >= 1_000 ? `in ${duration(next)}` : next > 0 ? 'in under a second' : 'due now'}
            </td>
            <td className="tabular whitespace-nowrap px-3 py-2 text-xs" title={dateTime(s.lastRunAt)}>
              {s.lastRunAt ? ago(nowMs - ms(s.lastRunAt)!) : 'never'}
              {s.lastJobId && (
                <>
                  {' · '}
                  <Link href={`/jobs/${s.lastJobId}`} className="hover:underline" data-testid="last-job">
                    job #{s.lastJobId}
                  </Link>
                </>
              )}
              {s.lastError && (
                <p className="mt-1 whitespace-normal wrap-anywhere text-red-700 dark:text-red-400" data-testid="tick-error" title={dateTime(s.lastErrorAt)}>
                  The due tick cannot be enqueued (tried {ago(nowMs - ms(s.lastErrorAt)!)}; every worker retries it): <UserText text={s.lastError} multiline />
                </p>
              )}
            </td>
          </tr>
        );
      })}
    </PageTable>
  );
}
