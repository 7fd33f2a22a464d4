import type { Executor } from '../../db/client';
import { log } from '../../log';
import type { ResultStore } from '../../results';
import { compareJobIds, type Job, type SeenJobs, toJob } from '../job';
import type { Doorbell } from '../signal';
import * as sql from '../statements';
import { isTerminal } from '../status';
import { isDeadlock, retriedOnLostRace, run, SINGLETON_KEY_INDEX, uniq } from './internal';
import { dropDeletedResults, dropResults } from './prune';

export type ActionOutcome =
  | 'requeued'
  | 'revoked'
  | 'cancelled'
  | 'cancel_requested'
  | 'deleted'
  | 'recovered'
  | 'rescheduled'
  | 'skipped'
  | 'not_found';

export interface ActionItem {
  id: string;
  ok: boolean;
  outcome: ActionOutcome;
  /** Why nothing happened, in words an operator can act on. */
  reason?: string;
  /** The job after the action (or as it stands, when skipped). */
  job?: Job;
}

export interface ActionReport {
  items: ActionItem[];
  changed: number;
  skipped: number;
}

type CurrentRow = Job & {
  leaseRemainingMs: number | null;
  /** run_at > now(), on the database's clock. */
  notYetDue: boolean;
  ownerGone?: string | null;
  /** The unfinished job, another one, that holds this job's singleton key. */
  singletonHolder?: string | null;
};

async function currentRows(db: Executor, ids: readonly string[]): Promise<Map<string, CurrentRow>> {
  if (ids.length === 0) return new Map();
  const { rows } = await run(db, sql.jobCurrent, [ids]);
  return new Map(
    rows.map((r) => [
      String(r.job_id),
      {
        ...toJob(r),
        leaseRemainingMs: r.lease_remaining_ms === null ? null : Number(r.lease_remaining_ms),
        notYetDue: r.not_yet_due === true,
        ownerGone: r.owner_gone ?? null,
        singletonHolder: r.singleton_holder === null ? null : String(r.singleton_holder),
      },
    ]),
  );
}

const seconds = (ms: number) => `${Math.max(0, Math.round(ms / 1000))} s`;

/** How a held singleton key refuses a requeue or a copy; the holder may be the job itself (a copy of an unfinished job). */
export const singletonRefusal = (holder: string, key: string | null, verb: 'requeue' | 'copy', self = false) =>
  self
    ? `this job holds its singleton key ${JSON.stringify(key)} itself (it is queued, retrying or running): ${verb} it once it has finished`
    : `job ${holder} holds its singleton key ${JSON.stringify(key)} (it is queued, retrying or running): ${verb} this one once that one has finished`;
/** Refusals for held keys, grouped in a bulk report whatever their holder and key. */
export const SINGLETON_REFUSAL = /^job \d+ holds its singleton key .*? \(it is queued, retrying or running\)/;
export const SINGLETON_GROUP = 'another job holds its singleton key (it is queued, retrying or running)';

/** Why `action` did nothing to this job, from its current row. */
export function describeRefusal(action: 'requeue' | 'cancel' | 'delete' | 'recover' | 'revoke' | 'reschedule', job: CurrentRow): string {
  const owner = job.workerId ?? 'unknown worker';
  if (action === 'reschedule') {
    return job.status === 'running'
      ? `running on ${owner}: only a waiting job (queued or retrying) can be rescheduled`
      : `already ${job.status}: only a waiting job (queued or retrying) can be rescheduled; requeue it to run it again`;
  }
  if ((action === 'requeue' || action === 'revoke') && job.singletonHolder) return singletonRefusal(job.singletonHolder, job.singletonKey, 'requeue');
  const leaseLive = job.status === 'running' && (job.leaseRemainingMs ?? 0) > 0;
  switch (job.status) {
    case 'running':
      // No lease's end makes a running job deletable: only a finished one is.
      if (action === 'delete') return `still running on ${owner}: cancel it first (only a finished job can be deleted)`;
      // An operator asked it to stop: taking its lease back would run it again.
      if (action === 'revoke' && job.cancelRequestedAt) {
        return job.ownerGone && leaseLive
          ? `cancel requested: it ends cancelled when the lease of ${owner}, whose process ended (${job.ownerGone}), runs out in ${seconds(job.leaseRemainingMs ?? 0)}, not run again`
          : `cancel requested: it ends cancelled when ${owner} stops, not run again`;
      }
      // Its worker is known dead: nothing holds the lease but the clock.
      if (leaseLive && job.ownerGone && action !== 'cancel')
        return `the lease of ${owner}, whose process ended (${job.ownerGone}), runs out in ${seconds(job.leaseRemainingMs ?? 0)}: the recover sweep moves the job on then${action === 'requeue' ? ' (or revoke the lease to take it back now)' : ''}`;
      if (action === 'cancel') return `cancel already requested; waiting for ${owner} to stop (its lease ends in ${seconds(job.leaseRemainingMs ?? 0)})`;
      if (action === 'recover')
        return leaseLive ? `lease still held by ${owner} for ${seconds(job.leaseRemainingMs ?? 0)}` : 'lease expired but the row is being changed by another transaction; try again';
      if (leaseLive)
        return `lease still held by ${owner} for ${seconds(job.leaseRemainingMs ?? 0)}${action === 'requeue' ? ' (revoke the lease to take it back)' : ''}`;
      return `running on ${owner} with an expired lease: recover it first${action === 'requeue' ? ', or revoke the lease' : ''}`;
    case 'completed':
      return action === 'recover' ? 'not running: already completed' : 'already completed';
    case 'failed':
      return 'already failed (in the dead letter)';
    case 'cancelled':
      return 'already cancelled';
    case 'queued':
    case 'retrying':
      if (action === 'delete') return `still ${job.status}: cancel it first`;
      if (action === 'recover') return `not running: ${job.status}, waiting to be claimed`;
      return job.status === 'queued' && action === 'requeue' ? 'already queued and due' : `already ${job.status}`;
  }
}

/** The statements' asSeen parameter for these ids: {"42": "failed:2"} (an id left out: no expectation), or null. */
function seenParam(ids: readonly string[], seen: SeenJobs | undefined): string | null {
  if (!seen?.size) return null;
  const o: Record<string, string> = {};
  for (const id of ids) {
    const v = seen.get(id);
    if (v) o[id] = `${v.status}:${v.attempt}`;
  }
  return JSON.stringify(o);
}

/**
 * Would `action`'s compare accept this job as it stands? The statements' conditions, on the
 * database's clock as the row was read (notYetDue): what a preview predicts (bulk.ts predict)
 * and why a report says a skipped job was left alone.
 */
export function actionApplies(
  action: Parameters<typeof describeRefusal>[0],
  job: Pick<CurrentRow, 'status' | 'notYetDue' | 'cancelRequestedAt' | 'leaseRemainingMs' | 'singletonHolder'>,
): boolean {
  const requeueable = (['failed', 'cancelled', 'completed', 'retrying'].includes(job.status) || (job.status === 'queued' && job.notYetDue)) && !job.singletonHolder;
  switch (action) {
    case 'requeue':
      return requeueable;
    case 'revoke':
      return requeueable || (job.status === 'running' && !job.cancelRequestedAt);
    case 'cancel':
      return job.status === 'queued' || job.status === 'retrying' || (job.status === 'running' && !job.cancelRequestedAt);
    case 'delete':
      return ['completed', 'failed', 'cancelled'].includes(job.status);
    case 'recover':
      return job.status === 'running' && (job.leaseRemainingMs ?? 0) <= 0;
    case 'reschedule':
      return job.status === 'queued' || job.status === 'retrying';
  }
}

async function report(
  db: Executor,
  ids: readonly string[],
  changed: Map<string, { outcome: ActionOutcome; job?: Job }>,
  action: Parameters<typeof describeRefusal>[0],
  seen?: SeenJobs,
): Promise<ActionReport> {
  const missing = ids.filter((id) => !changed.has(id));
  const current = await currentRows(db, missing);
  const items: ActionItem[] = ids.map((id) => {
    const hit = changed.get(id);
    if (hit) return { id, ok: true, outcome: hit.outcome, job: hit.job };
    const cur = current.get(id);
    if (!cur) return { id, ok: false, outcome: 'not_found', reason: 'no such job' };
    const { leaseRemainingMs: _, ...job } = cur;
    const was = seen?.get(id);
    // Changed since it was selected, into a state the action would take: that is why it was
    // left alone. Otherwise the action's own refusal says more ("lease still held by …").
    if (was && (was.status !== cur.status || was.attempt !== cur.attemptCount) && actionApplies(action, cur)) {
      const reason = `changed since it was selected (${was.status}, attempt ${was.attempt}; now ${cur.status}, attempt ${cur.attemptCount}): left alone`;
      return { id, ok: false, outcome: 'skipped', reason, job };
    }
    return { id, ok: false, outcome: 'skipped', reason: describeRefusal(action, cur), job };
  });
  const ok = items.filter((i) => i.ok).length;
  return { items, changed: ok, skipped: items.length - ok };
}

/** jobCancel — cancel waiting jobs at once; ask running ones to stop. */
export async function jobCancel(db: Executor, p: { ids: readonly string[]; seen?: SeenJobs }): Promise<ActionReport> {
  const ids = uniq(p.ids);
  const { rows } = await run(db, sql.jobCancel, [ids, seenParam(ids, p.seen)]);
  const changed = new Map(
    rows.map((r) => {
      const job = toJob(r);
      return [job.id, { outcome: (job.status === 'running' ? 'cancel_requested' : 'cancelled') as ActionOutcome, job }];
    }),
  );
  return report(db, ids, changed, 'cancel', p.seen);
}

/**
 * A requeue that lost a race for a singleton key, which rolled it back whole:
 * - an enqueue or another requeue took the key of a job it requeues after its snapshot was
 *   taken, so its insert into jobs_singleton_key_idx failed (23505). The next try sees the
 *   holder and leaves that job alone.
 * - a producer's transaction holding one key it requeues waits for another it holds (40P01:
 *   the statement writes the keys in its plan's order, the producer in its own).
 */
const lostSingletonRace = (e: { code?: string; constraint?: string }) =>
  (e.code === '23505' && e.constraint === SINGLETON_KEY_INDEX) || isDeadlock(e);

/**
 * For a requeue's preview: which of these jobs would be left alone for their singleton key,
 * and the job holding it (as the statement decides, see statements/actions.ts requeueTargets): a
 * finished job whose key an unfinished job holds, or one the oldest finished job of the
 * selection with the same key takes first. Returns job id → holder id.
 */
export async function singletonHolders(db: Executor, jobs: readonly Pick<Job, 'id' | 'status' | 'singletonKey'>[]): Promise<Map<string, string>> {
  const finished = jobs
    .filter((j) => j.singletonKey !== null && isTerminal(j.status))
    .sort((a, b) => compareJobIds(a.id, b.id));
  const out = new Map<string, string>();
  if (!finished.length) return out;
  const { rows } = await run(db, sql.jobIdsBySingletonKey, [[...new Set(finished.map((j) => j.singletonKey))]]);
  const holder = new Map<string, string>(rows.map((r) => [r.singleton_key, String(r.job_id)]));
  for (const j of finished) {
    const h = holder.get(j.singletonKey!);
    if (h) out.set(j.id, h);
    else holder.set(j.singletonKey!, j.id);
  }
  return out;
}

/**
 * jobRequeue — put finished (or backing-off) jobs back in the queue, due now. A running
 * job is refused unless `revokeLease` is set; then its lease is revoked and the fence
 * guarantees the old owner can no longer write.
 */
export async function jobRequeue(
  db: Executor,
  p: {
    ids: readonly string[];
    resetAttempts?: boolean;
    revokeLease?: boolean;
    doorbell?: Doorbell | null;
    results?: ResultStore | null;
    seen?: SeenJobs;
  },
): Promise<ActionReport> {
  const ids = uniq(p.ids);
  const changed = new Map<string, { outcome: ActionOutcome; job?: Job }>();
  const requeue = async (these: string[]) => {
    const { rows } = await retriedOnLostRace(db, lostSingletonRace, () => run(db, sql.jobRequeue, [these, !!p.resetAttempts, seenParam(these, p.seen)]));
    for (const r of rows) changed.set(String(r.job_id), { outcome: 'requeued', job: toJob(r) });
    await dropResults(p.results, rows.map((r) => r.dropped_result_key));
  };
  const ring = () => p.doorbell?.ring([...changed.values()].map(({ job }) => ({ jobId: job!.id, queue: job!.queue, priority: job!.priority })));
  try {
    await requeue(ids);
    if (p.revokeLease) {
      const running = ids.filter((id) => !changed.has(id));
      if (running.length) {
        const revoked = await run(db, sql.jobRevoke, [running, 'lease revoked by an operator (requeue)', !!p.resetAttempts, seenParam(running, p.seen)]);
        for (const r of revoked.rows) changed.set(String(r.job_id), { outcome: 'revoked', job: toJob(r) });
        // A job its worker completed or failed between the two statements is no longer
        // running, so the revoke refused it; it is requeueable now, and the operator asked
        // for it to run again (it was refused as "already completed", 14 of 400 in a review).
        // Not one the caller saw running (seen): it changed since it was selected.
        const finished = running.filter((id) => !changed.has(id) && !p.seen?.has(id));
        if (finished.length) await requeue(finished);
      }
    }
  } catch (err) {
    // What the statements before the failing one committed is queued now: rung all the same
    // (else it would wait for the recover sweep's ring), without hiding the error.
    if (changed.size) await ring()?.catch(() => {});
    throw err;
  }
  await ring();
  return report(db, ids, changed, p.revokeLease ? 'revoke' : 'requeue', p.seen);
}

/**
 * jobReschedule — move waiting jobs to a new due time (`runAt`; one in the past is now)
 * and/or priority; either left out is kept. Those due afterwards are rung at their level.
 */
export async function jobReschedule(
  db: Executor,
  p: { ids: readonly string[]; runAt?: Date | null; priority?: number | null; doorbell?: Doorbell | null; seen?: SeenJobs },
): Promise<ActionReport> {
  const ids = uniq(p.ids);
  const { rows } = await run(db, sql.jobReschedule, [ids, p.runAt ?? null, p.priority ?? null, seenParam(ids, p.seen)]);
  const changed = new Map(rows.map((r) => [String(r.job_id), { outcome: 'rescheduled' as const, job: toJob(r) }]));
  // Moved behind jobs of its old level: its ring there would still bring it first. (A worker
  // that popped it a moment before may still take it at its old place.) Moved ahead, its old
  // ring is only a duplicate: popped after the job ran, its claim is refused.
  const demoted = rows.filter((r) => r.priority > r.old_priority).map((r) => ({ jobId: String(r.job_id), queue: r.queue as string, priority: r.old_priority as number }));
  if (p.doorbell?.unring && demoted.length) {
    try {
      await p.doorbell.unring(demoted);
    } catch (err) {
      log.warn('could not take a demoted job\'s ring out of its old level: a worker may take it at its old place', { jobs: demoted.length, err });
    }
  }
  const due = rows.filter((r) => r.due).map((r) => ({ jobId: String(r.job_id), queue: r.queue as string, priority: r.priority as number }));
  if (p.doorbell && due.length) await p.doorbell.ring(due);
  return report(db, ids, changed, 'reschedule', p.seen);
}

/** jobDelete — delete finished jobs and their attempts (and their results, given the store). */
export async function jobDelete(db: Executor, p: { ids: readonly string[]; results?: ResultStore | null; seen?: SeenJobs }): Promise<ActionReport> {
  const ids = uniq(p.ids);
  const { rows } = await run(db, sql.jobDelete, [ids, seenParam(ids, p.seen)]);
  const gone = rows.map((r) => String(r.job_id));
  // The statement deleted the attempts its snapshot saw; one committed while it waited on a
  // row lock (the job requeued, claimed and ended meanwhile) is deleted now, the job row
  // being gone (no attempt can be recorded for it any more).
  if (gone.length) await run(db, sql.attemptsOfDeletedJobs, [gone]);
  await dropDeletedResults(p.results, rows.map((r) => [String(r.job_id), r.result_key]));
  const changed = new Map(gone.map((id) => [id, { outcome: 'deleted' as ActionOutcome }]));
  return report(db, ids, changed, 'delete', p.seen);
}
