'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { ConfirmDialog } from '@/components/actions/confirm-dialog';
import { Badge } from '@/components/ui/badge';
import { EmptyState, ErrorState } from '@/components/ui/states';
import { PageTable } from '@/components/ui/table';
import { UserText } from '@/components/ui/user-text';
import { ActionButton } from '@/components/actions/action-button';
import { meQuery } from '@/lib/api/auth';
import { DEFAULT_PRIORITY, priorityMeaning } from '@/lib/api/priority';
import { jobKeys, scheduleKeys, statsKeys } from '@/lib/api/keys';
import { defineSchedule, removeSchedule, runScheduleNow, type ScheduleDefinition, schedulesQuery, setSchedulePaused, type ScheduleRunDto } from '@/lib/api/schedules';
import { consoleMetaQuery } from '@/lib/api/console';
import { ScheduleDialog } from '@/components/schedules/schedule-dialog';
import { CronTicks } from './cron-ticks';
import { statsQuery } from '@/lib/api/stats';
import type { ScheduleDto } from '@/lib/api/types';
import { ago, dateTime, duration, ms } from '@/lib/ui/format';
import { useRefreshInterval } from '@/lib/ui/refresh';
import { useDbNow } from '@/lib/ui/use-now';
import { visible } from '@/lib/ui/visible';
import { roleRefusal } from '@/lib/ui/role-gate';
import type { Role } from '@/lib/auth/roles';

/**
 * The dialog open on the page: Run now, Pause or Remove of one schedule (Resume is one click,
 * as a queue's is), or the definition of a new one (`define` with none) or of this one.
 */
type Asking = { action: 'run' | 'pause' | 'remove'; schedule: ScheduleDto } | { action: 'define'; schedule: ScheduleDto | null } | null;

/** Past due by this much, a tick is said to be overdue, not "due now". */
const OVERDUE_MS = 10_000;

/** The recurring jobs: when each ticks next, when it last did, and the job that tick made. */
export function SchedulesView() {
  const interval = useRefreshInterval();
  const q = useQuery(schedulesQuery(interval));
  const now = useDbNow();
  // Which queues a live worker consumes (the overview's shared snapshot): a schedule whose
  // queue nobody consumes still ticks (any worker enqueues), and its jobs pile up.
  const stats = useQuery(statsQuery(interval && 15_000)); // not while refresh is paused
  const consumers = (queue: string): number | null => {
    if (!stats.data) return null;
    const listed = stats.data.queues.find((x) => x.queue === queue);
    // Every queue a worker consumed within the hour is listed, unless the list was cut
    // (at QUEUES_MAX, 200, by name).
    return listed ? listed.workersAlive : stats.data.queuesTruncated || stats.data.queues.length >= 200 ? null : 0;
  };
  // Shown to every role, disabled with why for one the server would refuse (lib/ui/role-gate.ts).
  const role = useQuery(meQuery()).data?.role ?? null;
  const qc = useQueryClient();
  const [asking, setAsking] = useState<Asking>(null);
  // The job each schedule's last Run now made (this page, this visit): linked on its row.
  const [ran, setRan] = useState<Record<string, ScheduleRunDto>>({});
  const changed = () => {
    void qc.invalidateQueries({ queryKey: scheduleKeys.all });
    void qc.invalidateQueries({ queryKey: statsKeys.all });
  };
  const run = useMutation({
    mutationFn: ({ name, reason }: { name: string; reason?: string }) => runScheduleNow(name, reason),
    onSuccess: (r) => {
      setRan((m) => ({ ...m, [r.schedule]: r }));
      changed();
      void qc.invalidateQueries({ queryKey: jobKeys.all });
    },
  });
  const pause = useMutation({
    mutationFn: ({ name, paused, reason }: { name: string; paused: boolean; reason?: string }) => setSchedulePaused(name, paused, reason),
    onSuccess: (_r, v) => {
      changed();
      if (v.paused) setAsking(null);
    },
  });
  const define = useMutation({
    mutationFn: ({ name, definition, onlyNew }: { name: string; definition: ScheduleDefinition; onlyNew: boolean }) => defineSchedule(name, definition, onlyNew),
    onSuccess: () => {
      changed();
      setAsking(null);
      define.reset();
    },
  });
  const remove = useMutation({
    mutationFn: ({ name, reason }: { name: string; reason?: string }) => removeSchedule(name, reason),
    onSuccess: () => {
      changed();
      setAsking(null);
      remove.reset();
    },
  });
  const knownTypes = useQuery(consoleMetaQuery()).data?.jobTypes ?? [];
  const close = () => {
    setAsking(null);
    run.reset();
    pause.reset();
    define.reset();
    remove.reset();
  };
  const newSchedule = (
    <ActionButton why={roleRefusal('schedule.add', role)} onClick={() => setAsking({ action: 'define', schedule: null })} testid="new-schedule">
      New schedule…
    </ActionButton>
  );
  const done = asking?.action === 'run' && run.data?.schedule === asking.schedule.name ? run.data : null;
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h1 className="text-xl font-semibold">Schedules</h1>
        {newSchedule}
      </div>
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
          Add one with New schedule, with <code>npx leasehold schedule add nightly-report --cron &apos;0 3 * * *&apos; --type demo.noop</code>,
          or define them in code for <code>npm run worker</code>.
        </EmptyState>
      ) : (
        <>
          {pause.isError && !asking && pause.variables && (
            <ErrorState
              title={`Could not ${pause.variables.paused ? 'pause' : 'resume'} schedule ${visible(pause.variables.name)}`}
              message={pause.error.message}
              onRetry={() => pause.mutate(pause.variables!)}
            />
          )}
          <ScheduleTable
            schedules={q.data.schedules}
            nowMs={now}
            readAtMs={ms(q.data.dbNow)!}
            consumers={consumers}
            tickers={stats.data ? stats.data.workersAlive : null}
            ran={ran}
            actions={{
              onRun: (schedule) => {
                run.reset();
                setAsking({ action: 'run', schedule });
              },
              onPause: (schedule) => {
                pause.reset();
                setAsking({ action: 'pause', schedule });
              },
              onResume: (schedule) => pause.mutate({ name: schedule.name, paused: false }),
              onEdit: (schedule) => {
                define.reset();
                setAsking({ action: 'define', schedule });
              },
              onRemove: (schedule) => {
                remove.reset();
                setAsking({ action: 'remove', schedule });
              },
              busy: pause.isPending ? pause.variables?.name : undefined,
              role,
            }}
          />
        </>
      )}
      {asking?.action === 'run' && (
        <ConfirmDialog
          title="Run now"
          confirmLabel="Run now"
          pending={run.isPending}
          error={run.isError ? run.error.message : null}
          done={done && <RunDone run={done} />}
          onConfirm={(reason) => run.mutate({ name: asking.schedule.name, reason })}
          onClose={close}
        >
          Enqueue one <span className="font-mono"><UserText text={asking.schedule.type} /></span> job on{' '}
          <strong><UserText text={asking.schedule.queue} /></strong> now, as a tick of{' '}
          <strong className="wrap-anywhere"><UserText text={asking.schedule.name} /></strong> would. Its next tick stays where it is
          {asking.schedule.paused ? ', and it stays paused' : ''}.
        </ConfirmDialog>
      )}
      {asking?.action === 'define' && (
        <ScheduleDialog
          editing={asking.schedule}
          knownTypes={knownTypes}
          knownQueues={(stats.data?.queues ?? []).filter((x) => x.workersAlive > 0).map((x) => x.queue)}
          consumers={consumers}
          pending={define.isPending}
          error={define.isError ? define.error.message : null}
          onSave={(name, definition) => define.mutate({ name, definition, onlyNew: !asking.schedule })}
          onEdit={() => define.isError && define.reset()}
          onClose={close}
          preview={(draft) => <CronTicks {...draft} />}
        />
      )}
      {asking?.action === 'remove' && (
        <ConfirmDialog
          title="Remove schedule"
          confirmLabel="Remove schedule"
          pending={remove.isPending}
          error={remove.isError ? remove.error.message : null}
          onConfirm={(reason) => remove.mutate({ name: asking.schedule.name, reason })}
          onClose={close}
        >
          <strong className="wrap-anywhere"><UserText text={asking.schedule.name} /></strong> ticks no more, on any worker; the jobs it
          already enqueued stay. A schedule a handlers module defines comes back at the next worker start: remove it there.
        </ConfirmDialog>
      )}
      {asking?.action === 'pause' && (
        <ConfirmDialog
          title="Pause schedule"
          confirmLabel="Pause schedule"
          pending={pause.isPending}
          error={pause.isError ? pause.error.message : null}
          onConfirm={(reason) => pause.mutate({ name: asking.schedule.name, paused: true, reason })}
          onClose={close}
        >
          No tick of <strong className="wrap-anywhere"><UserText text={asking.schedule.name} /></strong> is enqueued until it is resumed,
          on any worker (jobs already enqueued run as usual). Resumed, it starts from its next tick after the resume: the ticks
          it misses meanwhile are not run later.
        </ConfirmDialog>
      )}
    </div>
  );
}

/**
 * What a Run now made: the job, or the one a run-now a moment before made (a double click), or
 * the run still unfinished of a schedule that runs one at a time.
 */
function RunDone({ run }: { run: ScheduleRunDto }) {
  return (
    <p className="rounded border border-emerald-300 bg-emerald-50 p-2 text-emerald-900 dark:border-emerald-900 dark:bg-emerald-950 dark:text-emerald-200">
      {run.created ? 'Enqueued ' : run.overlapping ? 'It runs one at a time, and ' : 'A run-now a moment ago already enqueued '}
      <Link href={`/jobs/${run.id}`} className="font-medium underline" data-testid="ran-job">
        job #{run.id}
      </Link>
      {run.created ? '.' : run.overlapping ? ' is still unfinished; no second job was made.' : '; no second job was made.'}
    </p>
  );
}

interface RowActions {
  onRun(s: ScheduleDto): void;
  onPause(s: ScheduleDto): void;
  onResume(s: ScheduleDto): void;
  onEdit(s: ScheduleDto): void;
  onRemove(s: ScheduleDto): void;
  /** The schedule whose pause or resume is on its way. */
  busy?: string;
  /** The signed-in role (null: not known yet, or sign-in off): a button it may not use says why. */
  role: Role | null;
}

function ScheduleTable({
  schedules,
  nowMs,
  readAtMs,
  consumers,
  tickers,
  ran,
  actions,
}: {
  schedules: ScheduleDto[];
  nowMs: number;
  /** When the schedules were read (the database's clock): a tick overdue is one overdue then, not one a paused page has not seen run. */
  readAtMs: number;
  consumers(queue: string): number | null;
  /** Worker processes alive anywhere (each enqueues due ticks); null: not known yet. */
  tickers: number | null;
  ran: Record<string, ScheduleRunDto>;
  actions: RowActions | null;
}) {
  return (
    <PageTable testid="schedule-table" headings={['Name', 'Cron', 'Job', 'Next tick', 'Last tick', ...(actions ? ['Actions'] : [])]}>
      {schedules.map((s) => {
        const next = ms(s.nextRunAt)! - nowMs;
        const runsTicks = s.enabled && !s.paused;
        return (
          <tr key={s.name} className="border-b border-zinc-100 last:border-0 dark:border-zinc-800/60" data-testid={`schedule-${s.name}`}>
            <td className="min-w-[10rem] break-all px-3 py-2 font-medium">
              <UserText text={s.name} /> {!s.enabled && <Badge>disabled</Badge>}{' '}
              {s.paused && (
                <Badge tone="amber" title={s.pausedAt ? `paused ${dateTime(s.pausedAt)}` : undefined}>
                  <span data-testid="paused-badge">paused</span>
                </Badge>
              )}
            </td>
            <td className="whitespace-nowrap px-3 py-2 font-mono text-xs">
              <UserText text={s.cron} />
              <span className="text-zinc-500" data-testid="timezone">
                {' ('}
                <UserText text={s.timezone} />)
              </span>
            </td>
            <td className="min-w-[10rem] break-all px-3 py-2 text-xs">
              <span className="font-mono">
                <UserText text={s.type} />
              </span>{' '}
              on{' '}
              <Link href={`/jobs?queue=${encodeURIComponent(s.queue)}&type=${encodeURIComponent(s.type)}`} className="hover:underline">
                <UserText text={s.queue} />
              </Link>
              <span className="text-zinc-500"> · {s.maxAttempts} attempts</span>
              {s.priority !== DEFAULT_PRIORITY && (
                <span className="text-zinc-500" title={`priority ${s.priority}: ${priorityMeaning(s.priority)}`} data-testid="schedule-priority">
                  {' '}
                  · priority {s.priority}
                </span>
              )}
              {s.overlap === 'skip' && (
                <span className="text-zinc-500" title="a tick while a run of it is still queued, retrying or running is skipped" data-testid="schedule-overlap">
                  {' '}
                  · one run at a time
                </span>
              )}
              {runsTicks && tickers === 0 ? (
                <p className="mt-1 break-normal text-red-700 dark:text-red-400" data-testid="no-ticker">
                  No worker process is alive: no tick is enqueued until one starts, and the ticks missed meanwhile make one run.
                </p>
              ) : (
                runsTicks &&
                consumers(s.queue) === 0 && (
                  <p className="mt-1 break-normal text-red-700 dark:text-red-400" data-testid="no-consumer">
                    No live worker consumes this queue: each tick&apos;s job waits until one starts.
                  </p>
                )
              )}
            </td>
            <td className="tabular whitespace-nowrap px-3 py-2 text-xs" title={dateTime(s.nextRunAt)} data-testid="next-tick">
              {!s.enabled ? (
                '—'
              ) : s.paused ? (
                // The stored tick is the one it stopped at; a resume moves it to the next one after it.
                <span className="text-amber-700 dark:text-amber-300" title={`paused ${dateTime(s.pausedAt)}; resumed, it runs from its next tick after the resume`}>
                  paused{s.pausedAt ? ` ${ago(nowMs - ms(s.pausedAt)!)}` : ''}
                </span>
              ) : next >= 1_000 ? (
                `in ${duration(next)}`
              ) : next > 0 ? (
                'in under a second'
              ) : readAtMs - ms(s.nextRunAt)! < OVERDUE_MS ? (
                'due now'
              ) : (
                // A tick is enqueued within a second or so of coming due: one this late waits on
                // the workers (none alive, or failing to enqueue it: Last error says why).
                <span className="text-red-700 dark:text-red-400" data-testid="tick-overdue">
                  overdue by {duration(-next)}
                </span>
              )}
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
              {ran[s.name] && (
                <p className="mt-1" data-testid="run-now-job">
                  run now ·{' '}
                  <Link href={`/jobs/${ran[s.name]!.id}`} className="hover:underline">
                    job #{ran[s.name]!.id}
                  </Link>
                </p>
              )}
              {s.overlap === 'skip' && s.lastSkippedAt && (!s.lastRunAt || ms(s.lastSkippedAt)! > ms(s.lastRunAt)!) && (
                <p className="mt-1 text-amber-700 dark:text-amber-300" data-testid="tick-skipped" title={dateTime(s.lastSkippedAt)}>
                  skipped {ago(nowMs - ms(s.lastSkippedAt)!)}:{' '}
                  {s.lastSkippedJobId ? (
                    <>
                      <Link href={`/jobs/${s.lastSkippedJobId}`} className="underline">
                        job #{s.lastSkippedJobId}
                      </Link>{' '}
                      was unfinished
                    </>
                  ) : (
                    'a run was unfinished'
                  )}
                </p>
              )}
              {!s.paused && s.lastError && (
                <p className="mt-1 whitespace-normal wrap-anywhere text-red-700 dark:text-red-400" data-testid="tick-error" title={dateTime(s.lastErrorAt)}>
                  The due tick cannot be enqueued (tried {ago(nowMs - ms(s.lastErrorAt)!)}; every worker retries it): <UserText text={s.lastError} multiline />
                </p>
              )}
            </td>
            {actions && (
              <td className="whitespace-nowrap px-3 py-2 text-right">
                <div className="flex justify-end gap-1.5">
                  <ActionButton
                    size="sm"
                    why={roleRefusal('schedule.run', actions.role)}
                    onClick={() => actions.onRun(s)}
                    aria-label={`Run now: schedule ${visible(s.name)}`}
                    title="enqueue its job now; the next tick stays where it is"
                  >
                    Run now
                  </ActionButton>
                  {s.paused ? (
                    <ActionButton
                      size="sm"
                      why={roleRefusal('schedule.resume', actions.role)}
                      onClick={() => actions.onResume(s)}
                      disabled={actions.busy === s.name}
                      aria-label={`Resume schedule ${visible(s.name)}`}
                    >
                      Resume
                    </ActionButton>
                  ) : (
                    <ActionButton
                      size="sm"
                      why={roleRefusal('schedule.pause', actions.role)}
                      onClick={() => actions.onPause(s)}
                      disabled={actions.busy === s.name}
                      aria-label={`Pause schedule ${visible(s.name)}`}
                    >
                      Pause…
                    </ActionButton>
                  )}
                  <ActionButton size="sm" why={roleRefusal('schedule.add', actions.role)} onClick={() => actions.onEdit(s)} aria-label={`Edit schedule ${visible(s.name)}`}>
                    Edit…
                  </ActionButton>
                  <ActionButton size="sm" why={roleRefusal('schedule.remove', actions.role)} onClick={() => actions.onRemove(s)} aria-label={`Remove schedule ${visible(s.name)}`}>
                    Remove…
                  </ActionButton>
                </div>
              </td>
            )}
          </tr>
        );
      })}
    </PageTable>
  );
}
