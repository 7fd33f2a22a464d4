'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { AttemptList } from '@/components/jobs/attempt-list';
import { CopyJobDialog, type CopyRequest } from '@/components/jobs/copy-dialog';
import { RescheduleDialog, type RescheduleRequest } from '@/components/jobs/reschedule-dialog';
import { Attempts, HeartbeatAge, LeaseCountdown, leaseState } from '@/components/jobs/lease';
import { PayloadView } from '@/components/jobs/payload-view';
import { StatusBadge } from '@/components/jobs/status-badge';
import { Timeline } from '@/components/jobs/timeline';
import { WorkerLink } from '@/components/jobs/worker-link';
import { ActionButton } from '@/components/actions/action-button';
import { CopyButton } from '@/components/ui/copy-button';
import { Card, EmptyState, ErrorState } from '@/components/ui/states';
import { UserText } from '@/components/ui/user-text';
import { LongUserText } from '@/components/ui/long-user-text';
import { copyJob, jobDetailQuery, jobPayloadQuery, rescheduleJob } from '@/lib/api/jobs';
import { jobKeys } from '@/lib/api/keys';
import { placeInLine, priorityMeaning } from '@/lib/api/priority';
import { auditQuery } from '@/lib/api/audit';
import { consoleMetaQuery } from '@/lib/api/console';
import { meQuery } from '@/lib/api/auth';
import { roleRefusal } from '@/lib/ui/role-gate';
import { useLive } from '@/lib/api/live';
import type { BulkAction, JobDetailDto } from '@/lib/api/types';
import { SUSPECT_STREAK } from '@/lib/queue/job';
import { dateTime, duration, ms, shortDuration } from '@/lib/ui/format';
import { useRefreshInterval } from '@/lib/ui/refresh';
import { claimTakesOver, expiredLeaseMover, SWEEPING, sweepOf } from '@/lib/ui/sweep';
import { useDbNow } from '@/lib/ui/use-now';
import { marksSuspect, SUSPECT_ALONE, SUSPECT_MEANING } from '@/lib/ui/suspect';
import { useActionFlow } from '../../action-flow';

export function JobView({ id }: { id: string }) {
  const interval = useRefreshInterval();
  const live = useLive({ job: id }, interval);
  const q = useQuery(jobDetailQuery(id, live ? false : interval));
  const payload = useQuery(jobPayloadQuery(id));
  const audit = useQuery(auditQuery({ jobId: id }, live ? false : interval));
  const meta = useQuery(consoleMetaQuery()); // the renewal interval, for a late heartbeat
  const now = useDbNow();
  const flow = useActionFlow();
  const role = useQuery(meQuery()).data?.role;
  const [copying, setCopying] = useState(false);
  const qc = useQueryClient();
  const copy = useMutation({
    mutationFn: (request: CopyRequest) => copyJob(id, request),
    // The timeline shows the copy (its audit entry is on both jobs).
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['audit'] }),
  });
  const [rescheduling, setRescheduling] = useState(false);
  const reschedule = useMutation({
    mutationFn: (request: RescheduleRequest) => rescheduleJob(id, request),
    onSuccess: () => {
      setRescheduling(false);
      reschedule.reset();
      void qc.invalidateQueries({ queryKey: jobKeys.detail(id) });
      void qc.invalidateQueries({ queryKey: ['audit'] });
    },
  });
  // A 404 wins over the data held from before: the job is gone (deleted here or
  // elsewhere), and showing its last state with Delete still enabled would be a lie. The
  // dialog stays, so an operator who just deleted it still reads the report.
  if (q.isError && (q.error as { status?: number }).status === 404) {
    return (
      <>
        <EmptyState title={`No job #${id}`}>
          {q.data ? 'It has been deleted.' : 'It may have been deleted, or the id is mistyped.'}{' '}
          <Link href="/jobs" className="underline">
            Search the jobs
          </Link>
          .
        </EmptyState>
        {flow.element}
      </>
    );
  }
  if (q.isError && !q.data) {
    return <ErrorState title={`Cannot load job #${id}`} message={q.error.message} onRetry={() => void q.refetch()} />;
  }
  if (!q.data) return <p className="text-zinc-500">Loading…</p>;
  const d: JobDetailDto = q.data;
  // When the row was read: a lease end after it has not been seen yet (refresh paused, or the
  // next read not back): "not refreshed", never "expired", which would blame a live worker.
  const j = { ...d.job, readAt: d.dbNow };
  const lease = leaseState(j, now);
  // Who moves an expired lease on: the live workers' sweep, unless none is alive or it stopped.
  const w = d.workers;
  const sweep = w ? sweepOf({ workersAlive: w.anywhere, sweptAgoMs: w.sweptAgoMs, sweepStaleAfterMs: w.sweepStaleAfterMs }, now - ms(d.dbNow)!) : SWEEPING;
  const cadence = meta.data ?? null;
  // The job's error is its last failure's; a later attempt that ended otherwise (a revoked
  // lease, a cancel) has its own, newer one. A snooze's message is no error.
  const lastError = j.error === null ? null : ([...d.attempts].reverse().find((a) => a.error && a.outcome !== 'snoozed')?.error ?? j.error);
  const scheduled = j.status === 'queued' && ms(j.runAt)! > now;
  const suspect = marksSuspect(j.status, j.leaseLostStreak, SUSPECT_STREAK);
  const act = (action: BulkAction) => flow.start({ action, target: { ids: [j.id] }, label: `job #${j.id} (${j.type}, ${j.status})` });
  // Its singleton key, when a job holds it now: another job (d.singletonHolder), or this one
  // while it is unfinished. A requeue waits for another holder; a copy (the same key) for any.
  const keyHeldBy = d.singletonHolder ?? (j.singletonKey && ['queued', 'retrying', 'running'].includes(j.status) ? j.id : null);
  const keyHeldWhy = (verb: 'requeue' | 'copy') =>
    keyHeldBy === j.id
      ? `this job holds its singleton key (it is ${j.status}): ${verb} it once it has finished`
      : `job ${keyHeldBy} holds its singleton key: ${verb} this one once that one has finished`;
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <p className="text-sm text-zinc-500">
            <Link href="/jobs" className="hover:underline">
              Jobs
            </Link>{' '}
            /
          </p>
          <h1 className="flex flex-wrap items-center gap-2 text-xl font-semibold">
            Job <span className="font-mono">#{j.id}</span> <CopyButton text={j.id} label="Copy id" />
            <StatusBadge status={j.status} cancelRequested={!!j.cancelRequestedAt} />
            {suspect && (
              <span
                className="rounded bg-red-100 px-1.5 py-0.5 text-xs font-medium text-red-800 dark:bg-red-950 dark:text-red-200"
                data-testid="job-suspect"
                title={`${SUSPECT_MEANING}, or a job that was in hand when others were. ${SUSPECT_ALONE}; the attempts below say how each ended`}
              >
                suspect: {j.leaseLostStreak} leases lost in a row
              </span>
            )}
          </h1>
          <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-300">
            <span className="font-mono">
              <UserText text={j.type} />
            </span>{' '}
            on queue{' '}
            <span className="break-all">
              <UserText text={j.queue} />
            </span>
          </p>
        </div>
        <div className="flex flex-wrap gap-2" aria-label="Actions">
          {/* A job scheduled for later (or waiting out a retry's backoff) is requeued due now: "run now". */}
          <Action
            why={
              roleRefusal('requeue', role) ??
              (j.status === 'queued' && !scheduled ? 'already queued and due: it waits for a worker' : d.singletonHolder ? keyHeldWhy('requeue') : null)
            }
            onClick={() => act('requeue')}
            testid="requeue-button"
          >
            {scheduled ? 'Run now' : 'Requeue'}
          </Action>
          <Action
            why={
              roleRefusal('cancel', role) ??
              (j.cancelRequestedAt
                ? 'a cancel is already requested: its worker stops it at its next heartbeat'
                : !['queued', 'retrying', 'running'].includes(j.status)
                  ? `it has finished (${j.status})`
                  : null)
            }
            onClick={() => act('cancel')}
          >
            Cancel
          </Action>
          <Action
            why={
              roleRefusal('recover', role) ??
              (j.status !== 'running'
                ? 'only a running job has a lease to recover'
                : lease === 'left'
                  ? 'its lease is live: Recover moves on an expired lease only. Requeue, with "Revoke live leases", takes the job back now'
                  : null)
            }
            onClick={() => act('recover')}
            testid="recover-button"
          >
            Recover
          </Action>
          <Action
            why={roleRefusal('reschedule', role) ?? (!['queued', 'retrying'].includes(j.status) ? 'only a waiting job (queued or retrying) can be rescheduled' : null)}
            onClick={() => setRescheduling(true)}
            testid="reschedule-button"
          >
            Reschedule…
          </Action>
          <Action why={roleRefusal('copy', role) ?? (keyHeldBy ? keyHeldWhy('copy') : null)} onClick={() => setCopying(true)} testid="copy-button">
            Enqueue a copy…
          </Action>
          <Action
            variant="danger"
            why={
              roleRefusal('delete', role) ??
              (!['completed', 'failed', 'cancelled'].includes(j.status) ? 'only a finished job (completed, failed or cancelled) can be deleted: cancel it first' : null)
            }
            onClick={() => act('delete')}
          >
            Delete
          </Action>
        </div>
      </div>
      {q.isError && <ErrorState title="Refreshing failed: showing the last known state" message={q.error.message} />}
      {d.workers?.queuePaused && (j.status === 'queued' || j.status === 'retrying') && (
        <p className="rounded border border-amber-300 bg-amber-50 p-3 text-sm wrap-anywhere text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200" data-testid="paused-notice">
          Queue <UserText text={j.queue} /> is paused: no worker claims its jobs until it is resumed (the overview&apos;s queue table).
        </p>
      )}
      {d.workers && j.status !== 'running' && (d.workers.onQueue === 0 || d.workers.withHandler === 0) && (
        <p className="rounded border border-amber-300 bg-amber-50 p-3 text-sm wrap-anywhere text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200" data-testid="waiting-notice">
          {d.workers.onQueue === 0 ? (
            <>
              No live worker serves queue <UserText text={j.queue} />: the job waits until one starts.
            </>
          ) : (
            <>
              {d.workers.onQueue === 1 ? 'The live worker' : `None of the ${d.workers.onQueue} live workers`} on queue <UserText text={j.queue} />{' '}
              {d.workers.onQueue === 1 ? 'has no' : 'has a'} handler for <span className="font-mono"><UserText text={j.type} /></span>, and a worker claims only the types it
              has handlers for: the job waits, its attempts unspent, until a worker that has one starts.
            </>
          )}
        </p>
      )}

      {j.status === 'running' && (
        <Card title="Lease">
          <dl className="grid grid-cols-2 gap-3 text-sm md:grid-cols-4" data-testid="lease-panel">
            <div>
              <dt className="text-xs text-zinc-500">Owner</dt>
              <dd className="break-all font-mono" data-testid="owner">
                <WorkerLink workerId={j.workerId} />
              </dd>
            </div>
            <div>
              <dt className="text-xs text-zinc-500">Lease</dt>
              <dd>
                <LeaseCountdown job={j} nowMs={now} sweep={sweep} />
              </dd>
            </div>
            <div>
              <dt className="text-xs text-zinc-500">Heartbeat</dt>
              <dd>
                <HeartbeatAge job={j} nowMs={now} cadence={cadence} />
              </dd>
            </div>
            <div>
              <dt className="text-xs text-zinc-500">Attempts</dt>
              <dd>
                <Attempts job={j} />
              </dd>
            </div>
          </dl>
          {lease === 'expired' && (
            <p className="mt-3 text-sm text-red-700 dark:text-red-300" data-testid="expired-notice">
              <UserText text={j.workerId} /> stopped renewing this lease.{' '}
              {expiredLeaseMover(sweep, !!w && claimTakesOver(j, w), shortDuration)}{' '}
              Recover does it now.
            </p>
          )}
        </Card>
      )}

      <div className="grid gap-4 lg:grid-cols-3">
        <Card title="Facts" className="lg:col-span-1">
          <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-sm">
            <dt className="text-zinc-500">Attempts</dt>
            <dd>
              <Attempts job={j} />
              {j.maxAttempts !== j.attemptBudget && (
                <span
                  className="text-xs text-zinc-500"
                  data-testid="attempts-raised"
                  title="the limit rises by one for each attempt given back (a snooze, a hand-back at a shutdown or of a job claimed ahead, a revoked lease), to one more than those spent for a requeue, and by the enqueued number for a requeue with a fresh attempt budget"
                >
                  {' '}
                  ({attemptsRaised(j.maxAttempts, j.attemptBudget, d.attempts)})
                </span>
              )}
            </dd>
            <dt className="text-zinc-500">Priority</dt>
            <dd data-testid="job-priority">
              {j.priority} <span className="text-xs text-zinc-500">({priorityMeaning(j.priority)})</span>
            </dd>
            {d.ahead && (
              <>
                <dt className="text-zinc-500">In line</dt>
                <dd data-testid="job-in-line" title="counted over the types its queue's live workers have handlers for; a worker that also serves other queues takes their higher-priority jobs first too">
                  {placeInLine(d.ahead, j.priority)}
                  {suspect && <span className="text-zinc-500"> — as a suspect, it waits for a worker that holds no other suspect</span>}
                </dd>
              </>
            )}
            <dt className="text-zinc-500">Created</dt>
            <dd>{dateTime(j.createdAt)}</dd>
            <dt className="text-zinc-500">Due</dt>
            <dd>{dateTime(j.runAt)}</dd>
            <dt className="text-zinc-500">Started</dt>
            <dd>{dateTime(j.startedAt)}</dd>
            <dt className="text-zinc-500">Finished</dt>
            <dd>{dateTime(j.finishedAt)}</dd>
            {j.idempotencyKey && (
              <>
                <dt className="text-zinc-500">Idempotency key</dt>
                <dd className="break-all font-mono text-xs">
                  <UserText text={j.idempotencyKey} />
                </dd>
              </>
            )}
            {j.singletonKey && (
              <>
                <dt className="text-zinc-500">Singleton key</dt>
                <dd data-testid="job-singleton-key">
                  {/* The key may break anywhere (a long unspaced key); the note beside it at spaces only. */}
                  <span className="break-all font-mono text-xs">
                    <UserText text={j.singletonKey} />
                  </span>{' '}
                  <span className="text-xs text-zinc-500" title="at most one queued, retrying or running job holds a singleton key">
                    {d.singletonHolder ? (
                      <>
                        held by{' '}
                        <Link href={`/jobs/${d.singletonHolder}`} className="text-sky-700 hover:underline dark:text-sky-400">
                          job {d.singletonHolder}
                        </Link>
                        : requeue or copy this one once that one has finished
                      </>
                    ) : ['queued', 'retrying', 'running'].includes(j.status) ? (
                      'held by this job'
                    ) : (
                      'free'
                    )}
                  </span>
                </dd>
              </>
            )}
            {j.resultKey && (
              <>
                <dt className="text-zinc-500">Result</dt>
                <dd>
                  <a href={`/api/jobs/${j.id}/result`} className="text-sky-700 hover:underline dark:text-sky-400" data-testid="result-link">
                    {j.resultKey}
                  </a>
                </dd>
              </>
            )}
          </dl>
          {lastError && (
            <div className="mt-3">
              <p className="text-xs text-zinc-500">Last error</p>
              <p className="whitespace-pre-wrap wrap-anywhere text-sm text-red-700 dark:text-red-300" data-testid="last-error">
                <LongUserText text={lastError} multiline />
              </p>
            </div>
          )}
        </Card>
        <Card title="Timeline" className="lg:col-span-2">
          <Timeline detail={d} audit={audit.data?.entries} />
        </Card>
      </div>

      {j.checkpoints && Object.keys(j.checkpoints).length > 0 && (
        <Card title="Checkpoints">
          <p className="mb-2 text-xs text-zinc-500">Progress saved by the handler (ctx.checkpoint): the next attempt resumes from it.</p>
          <ol className="space-y-2 text-sm" data-testid="checkpoints">
            {Object.entries(j.checkpoints).map(([name, c]) => (
              <li key={name} className="rounded border border-zinc-200 p-2 dark:border-zinc-800">
                <span className="font-medium">
                  <UserText text={name} />
                </span>
                <span className="ml-2 text-xs text-zinc-500">
                  attempt {c.attempt} · {dateTime(String(c.at))}
                </span>
                <PayloadView text={JSON.stringify(c.value)} testid={`checkpoint-${name}`} />
              </li>
            ))}
          </ol>
        </Card>
      )}

      <Card title={`Attempts (${d.attempts.length})`}>
        {d.attempts.length ? (
          <AttemptList attempts={d.attempts} nowMs={now} logs={{ template: meta.data?.logUrl ?? null, job: j }} />
        ) : (
          <p className="text-sm text-zinc-500" data-testid="no-attempts">
            {scheduled
              ? `Not claimed yet: scheduled for ${dateTime(j.runAt)} (in ${duration(ms(j.runAt)! - now)}); a worker takes it then.`
              : j.status === 'queued'
                ? d.workers?.queuePaused
                  ? 'Not claimed yet: its queue is paused.'
                  : 'Not claimed yet: it waits for a worker.'
                : 'Never claimed.'}
          </p>
        )}
      </Card>
      <Card title="Payload">
        {payload.data !== undefined ? (
          <PayloadView text={payload.data} />
        ) : payload.isError ? (
          <ErrorState title="Cannot load the payload" message={payload.error.message} onRetry={() => void payload.refetch()} />
        ) : (
          <p className="text-sm text-zinc-500">Loading…</p>
        )}
      </Card>
      {flow.element}
      {rescheduling && (
        <RescheduleDialog
          job={j}
          pending={reschedule.isPending}
          error={reschedule.error?.message}
          onReschedule={(request) => reschedule.mutate(request)}
          onEdit={() => reschedule.error && reschedule.reset()}
          onClose={() => {
            setRescheduling(false);
            reschedule.reset();
          }}
        />
      )}
      {copying && (
        <CopyJobDialog
          job={j}
          stored={payload.data}
          storedError={payload.isError ? payload.error.message : null}
          pending={copy.isPending}
          error={copy.error?.message}
          made={copy.data?.id}
          onCopy={(request) => copy.mutate(request)}
          onEdit={() => copy.error && copy.reset()}
          onClose={() => {
            setCopying(false);
            copy.reset();
          }}
        />
      )}
    </div>
  );
}

/** An action button: disabled, with why, when the signed-in role (first) or the job's state forbids it. */
function Action({ why, onClick, children, variant, testid }: { why: string | null; onClick(): void; children: React.ReactNode; variant?: 'danger'; testid?: string }) {
  return (
    <ActionButton variant={variant} onClick={onClick} why={why} testid={testid}>
      {children}
    </ActionButton>
  );
}

/**
 * Why a job's attempt limit is above the one it was enqueued with: the attempts given back
 * (snoozed; aborted: handed back or revoked, each +1), and requeues for the rest.
 */
export function attemptsRaised(max: number, budget: number, attempts: readonly { outcome: string | null }[]): string {
  const raised = max - budget;
  const given = attempts.filter((a) => a.outcome === 'snoozed' || a.outcome === 'aborted').length;
  const base = `enqueued with ${budget}`;
  if (raised <= 0) return base;
  if (given === 0) return `${base}; raised by requeues`;
  const back = `${given} given back (snoozed, handed back or revoked)`;
  return given >= raised ? `${base}; ${back}` : `${base}; ${back}, the rest by requeues`;
}
