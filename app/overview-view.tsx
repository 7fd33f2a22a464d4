'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { DatabaseHealth } from '@/components/stats/database-health';
import { QueueTable } from '@/components/stats/queue-table';
import { RateChart } from '@/components/stats/rate-chart';
import { StatusCounts } from '@/components/stats/status-counts';
import { TypeTable } from '@/components/stats/type-table';
import { ActionButton } from '@/components/actions/action-button';
import { ConfirmDialog } from '@/components/actions/confirm-dialog';
import { Card, EmptyState, ErrorState } from '@/components/ui/states';
import { jobKeys, statsKeys } from '@/lib/api/keys';
import { useLive } from '@/lib/api/live';
import { consoleMetaQuery } from '@/lib/api/console';
import { meQuery } from '@/lib/api/auth';
import { roleRefusal } from '@/lib/ui/role-gate';
import { setQueuePaused } from '@/lib/api/queues';
import { visible } from '@/lib/ui/visible';
import { enqueueJob, type HistoryRange, statsHistoryQuery, statsQuery } from '@/lib/api/stats';
import { gapCount, oldestWaiting, signalGaps } from '@/lib/ui/signal';
import { sweepStoppedFor } from '@/lib/ui/sweep';
import { compact, dateTime, duration, int, ms, shortDuration } from '@/lib/ui/format';
import { useDbNow } from '@/lib/ui/use-now';
import { useRefreshInterval } from '@/lib/ui/refresh';
import { UserText } from '@/components/ui/user-text';
import { useActionFlow } from './action-flow';
import type { QueueStatsDto, RatePointDto } from '@/lib/api/types';

/** What the overview's held wait is (see lib/ui/signal.ts oldestWaiting). */
const HELD_TITLE =
  'on a paused queue, one no live worker consumes, or one whose due jobs are all of types no live worker handles or suspects waiting their turn: they wait by design (the wake-up signal below says so)';

/**
 * The oldest wait of jobs held by design, linked to them: the figure itself when no other
 * job waits (`asFigure`), else a grey note beside the figure of those that do.
 */
function HeldWait({ held, asFigure = false }: { held: NonNullable<ReturnType<typeof oldestWaiting>['held']>; asFigure?: boolean }) {
  return (
    <Link
      href={`/jobs?queue=${encodeURIComponent(held.queue)}&due=now`}
      className={asFigure ? 'min-w-0 wrap-anywhere hover:underline' : 'ml-2 min-w-0 wrap-anywhere text-xs font-normal text-zinc-500 hover:underline'}
      data-testid="oldest-held"
      title={HELD_TITLE}
    >
      {shortDuration(held.ageMs)}
      <span className={asFigure ? 'ml-1.5 text-xs font-normal text-zinc-500' : undefined}>
        {asFigure ? '' : ' '}on <UserText text={held.queue} /> ({held.why})
      </span>
    </Link>
  );
}

export function OverviewView() {
  const interval = useRefreshInterval();
  const live = useLive({ stats: true }, interval);
  const stats = useQuery(statsQuery(live ? false : interval));
  // The charts and the Job types table: live (this console's samples, the last hour) or a
  // range of the record the recover sweep keeps (a sample a minute, a week long).
  const [range, setRange] = useState<'live' | HistoryRange>('live');
  const history = useQuery(statsHistoryQuery(range === 'live' ? '24h' : range, range !== 'live'));
  const meta = useQuery(consoleMetaQuery());
  const production = /prod/i.test(meta.data?.environment ?? '');
  const now = useDbNow();
  const qc = useQueryClient();
  const flow = useActionFlow();
  const [last, setLast] = useState<string | null>(null);
  const enqueue = useMutation({
    mutationFn: () => enqueueJob({ type: 'demo.sleep', payload: { ms: 3000 } }),
    // The last success must not stand beside a new attempt's error.
    onMutate: () => setLast(null),
    onSuccess: (r) => {
      setLast(`Enqueued job #${r.id}`);
      void qc.invalidateQueries({ queryKey: statsKeys.all });
      void qc.invalidateQueries({ queryKey: jobKeys.all });
    },
  });
  // A write the signed-in role may not make is shown disabled, saying why (the server refuses it anyway).
  const role = useQuery(meQuery()).data?.role;
  const setPaused = useMutation({
    mutationFn: ({ queue, paused, reason }: { queue: string; paused: boolean; reason?: string }) => setQueuePaused(queue, paused, reason),
    onSuccess: () => void qc.invalidateQueries({ queryKey: statsKeys.all }),
  });
  // The queue whose pause is being confirmed: a pause stops every worker on every host claiming
  // from it, so it is asked once more, with a reason for the audit log; a resume puts things
  // back as they were, one click.
  const [pausing, setPausing] = useState<string | null>(null);
  const closePause = () => {
    setPausing(null);
    if (setPaused.isError) setPaused.reset();
  };
  const recover = () => flow.start({ action: 'recover', target: { all: true }, label: 'every running job whose lease expired, and due jobs whose wake-up signal is missing' });

  if (stats.isError && !stats.data) {
    return (
      <ErrorState
        title="Cannot load the overview"
        message={stats.error.message}
        hint="Check that PostgreSQL is reachable from the console (DATABASE_URL) — the console keeps retrying at the refresh interval."
        onRetry={() => void stats.refetch()}
      />
    );
  }
  const s = stats.data;
  const t = s?.throughput;
  const h = range === 'live' ? null : history.data;
  const rangeName = range === '24h' ? '24 hours' : range === '7d' ? '7 days' : null;
  // Due jobs with no id waiting in Redis for them, on queues live workers take from (those
  // on paused or unserved queues wait by design, and are said apart).
  const gaps = signalGaps(s?.queues ?? []);
  const waitingByDesign = gaps.paused + gaps.unserved + gaps.limited + gaps.unhandled + gaps.suspect;
  const unrung = gaps.missing;
  // More queues than the stats list: the server's figure over all of them, unnamed.
  const oldest = s?.queuesTruncated
    ? { taken: s.oldestQueuedAgeMs === null ? null : { queue: '', ageMs: s.oldestQueuedAgeMs }, held: null }
    : oldestWaiting(s?.queues ?? []);
  const sweepStopped = s ? sweepStoppedFor(s, now - ms(s.computedAt)!) : null;
  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h1 className="text-xl font-semibold">Overview</h1>
        <div className="flex items-center gap-3">
          {last && (
            <span className="text-sm text-zinc-500" role="status">
              {last}
            </span>
          )}
          {enqueue.isError && (
            <span className="max-w-md wrap-anywhere text-sm text-red-700 dark:text-red-300" role="alert" data-testid="enqueue-error">
              Could not enqueue: <UserText text={enqueue.error.message} />
            </span>
          )}
          <ActionButton onClick={recover} why={roleRefusal('recover', role)}>
            Recover…
          </ActionButton>
          {/* A demo button has no place where the jobs are real, and is not this page's main action. */}
          {!production && (
            <ActionButton
              onClick={() => enqueue.mutate()}
              disabled={enqueue.isPending}
              why={roleRefusal('enqueue', role)}
              title={roleRefusal('enqueue', role) ? undefined : 'enqueues a demo.sleep job of 3 s on the default queue'}
            >
              Enqueue demo job
            </ActionButton>
          )}
        </div>
      </div>
      {stats.isError && <ErrorState title="Showing the last numbers: refreshing failed" message={stats.error.message} />}
      {!s ? (
        <p className="text-zinc-500">Loading…</p>
      ) : (
        <>
          <StatusCounts
            counts={s.counts}
            kinds={s.kinds}
            ageMs={now - ms(s.computedAt)!}
            estimateAgeMs={s.estimates.analyzedAt ? now - ms(s.estimates.analyzedAt)! : null}
            countCap={s.estimates.countCap}
          />
          {s.schedulesFailing > 0 && (
            <p className="text-sm text-red-700 dark:text-red-300" role="alert" data-testid="schedules-failing">
              {s.schedulesFailing === 1 ? '1 schedule cannot enqueue its due tick' : `${int(s.schedulesFailing)} schedules cannot enqueue their due ticks`}:{' '}
              <Link href="/schedules" className="underline">
                see why on the Schedules page
              </Link>
              .
            </p>
          )}
          {s.schedulesSkipping > 0 && (
            <p className="text-sm text-amber-700 dark:text-amber-300" data-testid="schedules-skipping">
              {s.schedulesSkipping === 1
                ? '1 schedule that runs one at a time skipped its latest tick: its previous run is still unfinished'
                : `${int(s.schedulesSkipping)} schedules that run one at a time skipped their latest tick: a previous run is still unfinished`}
              ; one that stays so has a stuck run:{' '}
              <Link href="/schedules" className="underline">
                the Schedules page links it
              </Link>
              .
            </p>
          )}
          {sweepStopped !== null && (
            <p className="text-sm text-red-700 dark:text-red-300" role="alert" data-testid="sweep-stopped">
              The recover sweep last ran {shortDuration(sweepStopped)} ago, although {s.workersAlive === 1 ? '1 worker process is' : `${int(s.workersAlive)} worker processes are`}{' '}
              alive: the jobs only it moves on stay running (expired leases of paused or limited queues; jobs whose worker died with a
              cancel asked, or with no attempts left). Either every sweep fails (the workers&apos; log says &quot;recover sweep failed&quot;) or a
              session holds its lock without sweeping; in psql,{' '}
              <code className="text-xs">
                SELECT pid, state, wait_event, query FROM pg_stat_activity WHERE pid IN (SELECT pid FROM pg_locks WHERE locktype = &apos;advisory&apos; AND granted)
              </code>{' '}
              finds it. Recover moves expired leases on meanwhile.
            </p>
          )}
          <DatabaseHealth database={s.database} snapshotAgeMs={now - ms(s.computedAt)!} />
          <dl className="grid grid-cols-2 gap-3 text-sm md:grid-cols-5">
            <Kpi label="Jobs in the table" testid="total">
              {s.totalKind === 'exact' ? int(s.total) : `≈${compact(s.total)}`}
            </Kpi>
            <Kpi label="Oldest due job waiting" testid="oldest-queued" warn={(oldest.taken?.ageMs ?? 0) > 60_000}>
              {oldest.taken && !oldest.taken.queue ? (
                shortDuration(oldest.taken.ageMs)
              ) : oldest.taken ? (
                <Link href={`/jobs?queue=${encodeURIComponent(oldest.taken.queue)}&due=now`} className="min-w-0 wrap-anywhere hover:underline" title="the due jobs of this queue, oldest last">
                  {shortDuration(oldest.taken.ageMs)}
                  <span className="ml-1.5 text-xs font-normal text-zinc-500">
                    on <UserText text={oldest.taken.queue} />
                  </span>
                </Link>
              ) : oldest.held ? (
                // Only jobs that wait by design: their wait is still the figure (not "—" while
                // a job has waited for minutes on a queue no worker consumes, a typo's sign),
                // with why, in plain colours (the panel below says they wait on purpose).
                <HeldWait held={oldest.held} asFigure />
              ) : (
                '—'
              )}
              {oldest.taken && oldest.held && <HeldWait held={oldest.held} />}
            </Kpi>
            <Kpi label="Running with an expired lease" testid="running-expired" warn={s.runningExpired > 0}>
              {int(s.runningExpired)}
              {s.runningExpired > 0 && (
                <ActionButton size="sm" className="ml-2" onClick={recover} why={roleRefusal('recover', role)}>
                  Recover
                </ActionButton>
              )}
            </Kpi>
            <Kpi label="Workers alive" testid="workers-alive" warn={s.workersAlive === 0}>
              {s.workersAlive}
            </Kpi>
            <Kpi label="Stale workers (no heartbeat for a lease)" testid="workers-stale" warn={s.workersStale > 0}>
              <Link href="/workers" className="hover:underline">
                {s.workersStale}
              </Link>
            </Kpi>
          </dl>
          <Card title="Wake-up signal: due jobs in PostgreSQL vs ids in Redis">
            <p className="text-sm" data-testid="signal-summary">
              {s.signal.usingRedis ? (
                <>
                  <strong>
                    {s.queues.some((q) => q.dueCapped) ? '≥' : ''}
                    {int(s.signal.due)}
                  </strong>{' '}
                  due in PostgreSQL, <strong>{int(s.signal.backlog ?? 0)}</strong> ids waiting in Redis.{' '}
                  {unrung > 0 ? (
                    <span className="text-amber-700 dark:text-amber-300">
                      {gapCount(unrung, gaps.atLeast.missing, int)} due {unrung === 1 ? 'job has' : 'jobs have'} no wake-up id (every
                      worker busy, or a ring was lost):{' '}
                      {s.workersAlive > 0
                        ? 'the recover sweep re-rings them after a grace period, or run Recover now.'
                        : 'no worker is alive to run the recover sweep; Recover rings them now.'}
                    </span>
                  ) : (
                    <span className="text-emerald-700 dark:text-emerald-300">
                      Every due job {waitingByDesign > 0 ? 'a live worker can take ' : ''}has a wake-up waiting.
                    </span>
                  )}
                  {gaps.stale > 0 && (
                    <span className="text-zinc-500 dark:text-zinc-400" data-testid="signal-stale">
                      {' '}
                      {int(gaps.stale)} more {gaps.stale === 1 ? 'id' : 'ids'} than due jobs: rings of jobs cancelled, moved or claimed from PostgreSQL since, or
                      rung twice; a worker that pops one finds nothing to claim and drops it.
                    </span>
                  )}
                  {waitingByDesign > 0 && (
                    <span className="text-zinc-500 dark:text-zinc-400" data-testid="signal-waiting">
                      {' '}
                      {[
                        gaps.paused > 0 && `${gapCount(gaps.paused, gaps.atLeast.paused, int)} wait on paused queues`,
                        gaps.unserved > 0 && `${gapCount(gaps.unserved, gaps.atLeast.unserved, int)} on queues no live worker consumes`,
                        gaps.limited > 0 && `${gapCount(gaps.limited, gaps.atLeast.limited, int)} on limited queues (claimed by polling, within their limits)`,
                        gaps.unhandled > 0 && `${gapCount(gaps.unhandled, gaps.atLeast.unhandled, int)} are of types no live worker has a handler for`,
                        gaps.suspect > 0 && `${gapCount(gaps.suspect, gaps.atLeast.suspect, int)} are suspects (a likely poison: a worker takes one at a time)`,
                      ]
                        .filter(Boolean)
                        .join(' · ')}{' '}
                      (they wait for their queue to be resumed, their limit, their turn or a worker that can run them; no wake-up is missing).
                    </span>
                  )}
                </>
              ) : s.signal.redisConfigured ? (
                <span className="text-red-700 dark:text-red-300" data-testid="redis-unreachable">
                  Redis is unreachable: producers ring through PostgreSQL (NOTIFY) and workers claim straight from it (poll + LISTEN) until it
                  answers again. Nothing is lost; wake-ups are slower.
                </span>
              ) : (
                <span className="text-amber-700 dark:text-amber-300">
                  Redis is not in use: workers claim straight from PostgreSQL (poll + LISTEN/NOTIFY). Nothing is lost; wake-ups are slower.
                </span>
              )}
            </p>
          </Card>
          <div className="flex flex-wrap items-center justify-between gap-2">
            <h2 className="text-sm font-semibold">Activity</h2>
            <label className="flex items-center gap-2 text-sm">
              <span className="text-zinc-500">Charts and job types over</span>
              <select
                value={range}
                onChange={(e) => setRange(e.target.value as typeof range)}
                className="rounded border border-zinc-300 bg-white px-1.5 py-0.5 dark:border-zinc-700 dark:bg-zinc-900"
                data-testid="activity-range"
              >
                <option value="live">the last hour (live)</option>
                <option value="24h">the last 24 hours</option>
                <option value="7d">the last 7 days</option>
              </select>
            </label>
          </div>
          {range !== 'live' && history.isError && <ErrorState title={`Cannot load the last ${rangeName}`} message={history.error.message} onRetry={() => void history.refetch()} />}
          {range !== 'live' && !h ? (
            !history.isError && <p className="text-sm text-zinc-500">Loading the last {rangeName}…</p>
          ) : h ? (
            <>
              <ActivityCharts
                points={h.points}
                per={duration(h.bucketMs)}
                empty="The recover sweep records the workers' counters once a minute; a chart needs two samples in the range."
              />
              <Card title={`Job types: the last ${rangeName}`}>
                {h.types.length ? (
                  <TypeTable rows={h.types} />
                ) : (
                  <EmptyState title={h.since ? 'No attempt ended' : 'Not recorded yet'}>
                    {h.since ? `No worker ended an attempt since ${dateTime(h.since)}.` : 'The recover sweep records the workers’ counters once a minute.'}
                  </EmptyState>
                )}
                {h.since && ms(h.until)! - ms(h.since)! < h.rangeMs - 2 * h.bucketMs && (
                  <p className="mt-2 text-xs text-zinc-500" data-testid="history-since">
                    Since {dateTime(h.since)}, the first sample recorded in the range. The rates here are the workers&apos; own counts (a worker killed
                    mid-minute takes its last counts with it).
                  </p>
                )}
              </Card>
            </>
          ) : (
            <>
            <ActivityCharts points={t?.points ?? []} empty="The charts fill in as the console samples the workers' counters (every 5 s)." />
            <Card title={`Job types: the last ${duration(s.types.windowMs)}`}>
              {s.types.rows.length ? (
                <TypeTable rows={s.types.rows} />
              ) : (
                <EmptyState title={s.types.since ? 'No attempt ended' : 'Collecting'}>
                  {s.types.since
                    ? `No worker ended an attempt since ${new Date(s.types.since).toLocaleTimeString('en-GB')}.`
                    : 'Per job type, what the attempts did appears after two samples of the workers’ counters.'}
                </EmptyState>
              )}
              {s.types.since && s.types.rows.length > 0 && ms(s.types.until)! - ms(s.types.since)! < s.types.windowMs - 60_000 && (
                <p className="mt-2 text-xs text-zinc-500" data-testid="types-since">
                  Since {new Date(s.types.since).toLocaleTimeString('en-GB')}, when this console process began sampling.
                </p>
              )}
            </Card>
            </>
          )}
          <Card title="Queues">
            {setPaused.isError && setPaused.variables && !pausing && (
              <div className="mb-3" data-testid="queue-control-error">
                <ErrorState
                  title={`Could not ${setPaused.variables.paused ? 'pause' : 'resume'} queue ${visible(setPaused.variables.queue)}`}
                  message={setPaused.error.message}
                  onRetry={() => setPaused.mutate(setPaused.variables!)}
                />
              </div>
            )}
            {s.queues.length ? (
              <QueueTable
                queues={s.queues}
                usingRedis={s.signal.usingRedis}
                onPause={(queue) => {
                  setPaused.reset();
                  setPausing(queue);
                }}
                onResume={(queue) => setPaused.mutate({ queue, paused: false })}
                pauseWhy={roleRefusal('pause', role)}
                resumeWhy={roleRefusal('resume', role)}
                busyQueue={setPaused.isPending ? setPaused.variables?.queue : undefined}
              />
            ) : (
              <EmptyState title="No queues yet">
                Enqueue a job (<code>POST /api/jobs</code> or <code>npx leasehold enqueue</code>) and its queue appears here.
              </EmptyState>
            )}
            {s.queuesTruncated && (
              <p className="mt-2 text-xs text-amber-700 dark:text-amber-300" data-testid="queues-truncated">
                More queues hold waiting jobs than are listed: these are the first {int(s.queues.length)} by name. The oldest due job above counts them all; filter the jobs list by queue for the rest.
              </p>
            )}
            {pausing !== null && (
              <ConfirmDialog
                title="Pause queue"
                confirmLabel="Pause queue"
                pending={setPaused.isPending}
                error={setPaused.isError && setPaused.variables?.paused ? setPaused.error.message : null}
                onConfirm={(reason) => setPaused.mutate({ queue: pausing, paused: true, reason }, { onSuccess: () => setPausing(null) })}
                onClose={closePause}
              >
                <PauseWhat queue={pausing} stats={s.queues.find((q) => q.queue === pausing)} />
              </ConfirmDialog>
            )}
          </Card>
          <p className="text-xs text-zinc-500" data-testid="stats-footnote">
            Computed in {int(s.computeMs)} ms on the database, shared by every viewer, refreshed at most every {duration(s.refreshMs)}. Counts up to{' '}
            {int(s.estimates.countCap)} per status are exact; larger ones (≈) come from the live row count and the last ANALYZE. Rates come from the
            workers&apos; counters{t?.since ? `, sampled since ${new Date(t.since).toLocaleTimeString('en-GB')}` : ''}; the dead letter&apos;s from the failed
            jobs themselves (a failure a killed worker never reported is counted).
          </p>
        </>
      )}
      {flow.element}
    </div>
  );
}

/**
 * Throughput and failures, jobs per second per point: the live samples or a range of the
 * record. "Lease lost" is the lost attempts as the attempt history records them, in both: a
 * SIGKILLed worker never counts its loss, and the one that took its job over may not either.
 */
function ActivityCharts({ points, per, empty }: { points: Pick<RatePointDto, 't' | 'completed' | 'claimed' | 'failed' | 'retried' | 'recovered'>[]; per?: string; empty: string }) {
  const times = points.map((p) => p.t);
  const unit = per ? `jobs/s, per ${per}` : 'jobs/s';
  const chart = (label: string, series: { label: string; color: string; key: 'completed' | 'claimed' | 'failed' | 'retried' | 'recovered' }[]) =>
    times.length > 1 ? (
      <RateChart label={label} times={times} series={series.map((s) => ({ label: s.label, color: s.color, values: points.map((p) => p[s.key]) }))} />
    ) : (
      <EmptyState title="Collecting">{empty}</EmptyState>
    );
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <Card title={`Throughput (${unit})`}>
        {chart('throughput chart', [
          { label: 'completed', color: '#10b981', key: 'completed' },
          { label: 'claimed', color: '#0ea5e9', key: 'claimed' },
        ])}
      </Card>
      <Card title={`Failures (${unit})`}>
        {chart('failure chart', [
          { label: 'failed (dead letter)', color: '#ef4444', key: 'failed' },
          { label: 'retried', color: '#f97316', key: 'retried' },
          { label: 'lease lost', color: '#a855f7', key: 'recovered' },
        ])}
      </Card>
    </div>
  );
}

function Kpi({ label, children, testid, warn }: { label: string; children: React.ReactNode; testid: string; warn?: boolean }) {
  return (
    <div className="rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900">
      <dt className="text-xs text-zinc-500">{label}</dt>
      <dd className={`tabular mt-1 flex flex-wrap items-center text-lg font-semibold ${warn ? 'text-red-700 dark:text-red-300' : ''}`} data-testid={testid}>
        {children}
      </dd>
    </div>
  );
}

/** What a pause of this queue does, with its numbers as the snapshot has them. */
function PauseWhat({ queue, stats: q }: { queue: string; stats: QueueStatsDto | undefined }) {
  const running = q && q.kinds.running === 'exact' ? q.counts.running : null;
  return (
    <div className="space-y-2" data-testid="pause-what">
      <p>
        No worker on any host claims a job from <strong className="wrap-anywhere"><UserText text={queue} /></strong> until it is resumed
        {q && q.workersAlive > 0 ? ` (${int(q.workersAlive)} live worker process${q.workersAlive === 1 ? '' : 'es'} consume${q.workersAlive === 1 ? 's' : ''} it)` : ''}.
      </p>
      <p>
        {running === null ? 'Its jobs running now finish' : running === 0 ? 'None of its jobs is running' : running === 1 ? 'The 1 job running finishes' : `The ${int(running)} jobs running finish`}
        {!q || q.due > 0 ? `; the ${q ? `${q.dueCapped ? 'at least ' : ''}${int(q.due)} ` : ''}due now wait, with those that come due meanwhile` : '; none is due now, and those that come due wait'}.
        New jobs are still accepted, and wait too. Resume is one click.
      </p>
    </div>
  );
}
