/**
 * The queue's operations: typed functions over the statements in statements.ts, the only
 * module that runs them. The worker, the HTTP API, the console and the CLI all call
 * these same functions, so a button can never do what the state machine forbids.
 *
 * Each takes an executor (a pool, or a client inside the caller's transaction) and a
 * params object. Zero rows is an answer, not an exception: worker ops return what was
 * accepted; operator ops report per item what happened and, when nothing did, why
 * (from the job's current row, read after the refusal).
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { answeredByServer, type Executor, useConnection, useTransaction } from '../db/client';
import { failpoint, failpointsEnabled, isSkipped } from '../failpoints';
import {
  AHEAD_CAP,
  type ClaimedJob,
  compareJobIds,
  DEFAULT_PRIORITY,
  type EnqueueKey,
  type Job,
  PRIORITY_LEVELS,
  type Lease,
  SCHEDULE_OVERLAPS,
  type ScheduleOverlap,
  type SeenJobs,
  toClaimedJob,
  toJob,
} from './job';
import { log } from '../log';
import type { ResultStore } from '../results';
import type { Doorbell, Ring } from './signal';
import * as sql from './statements';
import { type AttemptOutcome, isTerminal, type JobStatus } from './status';
import { QueueError } from './errors';
import { nextTick } from './cron';
import { storableText } from './text';
import { recordStatsSample } from './history';
import { foldOldWorkers } from './worker-totals';
import type { JobKind } from './type-metrics';

const run = <R extends pg.QueryResultRow = any>(db: Executor, st: sql.Statement, values: unknown[]) =>
  db.query<R>({ name: st.name, text: st.text, values });

/**
 * A PostgreSQL array literal for ids and integers, built directly: node-postgres quotes and
 * escapes every element of a JS array one by one, a measurable cost on a batch of a
 * thousand. Only for digit strings and integers (nothing to quote).
 */
const intArray = (values: readonly (string | number)[]) => `{${values.join(',')}}`;

/**
 * A per-job input of a fenced write, as the JSON object its statement looks each row up in
 * by id (statements.ts `at`): {"42": value, …}. Null values are left out (a missing key
 * reads as NULL), so the common all-null input (no result keys) is `{}`. Texts are made
 * storable: jsonb refuses a NUL or half an emoji, which would fail every write of the batch.
 */
function byJobId<T extends { jobId: string }>(items: readonly T[], value: (item: T) => unknown): string {
  const o: Record<string, unknown> = {};
  for (const i of items) {
    const v = value(i);
    if (v !== null && v !== undefined) o[i.jobId] = typeof v === 'string' ? storableText(v) : v;
  }
  return JSON.stringify(o);
}


// ------------------------------------------------------------------ producers

export interface EnqueueInput {
  type: string;
  payload?: unknown;
  queue?: string;
  maxAttempts?: number;
  /** When the job becomes due; default now (database clock). */
  runAt?: Date | null;
  /** A second enqueue with the same key returns the first job's id and inserts nothing. */
  idempotencyKey?: string | null;
  /** 0 (the default) runs first, 9 last (job.ts PRIORITY_LEVELS). */
  priority?: number;
  /**
   * One job at a time per key: while a job with this key is queued, retrying or running, an
   * enqueue with it returns that job and inserts nothing. A finished job lets the key go.
   */
  singletonKey?: string | null;
}

export interface EnqueueResult {
  id: string;
  queue: string;
  /**
   * false when an existing job was returned instead: the one with the same idempotency key,
   * else the unfinished one holding the same singleton key.
   */
  created: boolean;
  /** With created false: which of the job's keys returned the existing one. */
  heldBy?: EnqueueKey;
}

export const DEFAULT_QUEUE = 'default';
export { DEFAULT_MAX_ATTEMPTS } from './job';

/**
 * jobEnqueue — INSERT the jobs (one statement however many), then, after the commit,
 * ring the doorbell for those due now. With a pool the statement commits on its own;
 * inside the caller's transaction pass no doorbell and ring after your COMMIT
 * (see lib/client.ts), so a worker can never be woken for a row it cannot see yet.
 */
export async function jobEnqueue(
  db: Executor,
  inputs: readonly EnqueueInput[],
  opts: { doorbell?: Doorbell | null } = {},
): Promise<EnqueueResult[]> {
  return enqueue(db, inputs, opts.doorbell, 0);
}

/**
 * Tries of an insert whose key's job let it go between the conflict and the lookup (an
 * idempotency key's job deleted by an operator or retention; a singleton key's job finished):
 * the key is free again each time, so each try can only lose to a new job taking it, and that
 * one letting it go as fast.
 */
const KEY_FREED_TRIES = 5;

/** jobEnqueue; `tries`: inserts tried before, their key's job deleted in between (see below). */
async function enqueue(db: Executor, inputs: readonly EnqueueInput[], doorbell: Doorbell | null | undefined, tries: number): Promise<EnqueueResult[]> {
  if (inputs.length === 0) return [];
  if (inputs.length === 1) return enqueueOne(db, inputs[0]!, doorbell, tries);
  const { rows } = await run(db, sql.jobEnqueue, [
    inputs.map((i) => i.queue ?? DEFAULT_QUEUE),
    inputs.map((i) => i.type),
    inputs.map((i) => JSON.stringify(i.payload ?? {})),
    inputs.map((i) => i.maxAttempts ?? null),
    inputs.map((i) => i.runAt ?? null),
    inputs.map((i) => i.idempotencyKey ?? null),
    inputs.map((i) => i.priority ?? DEFAULT_PRIORITY),
    inputs.map((i) => i.singletonKey ?? null),
  ]);
  const results: EnqueueResult[] = new Array(inputs.length);
  const conflicted: EnqueueInput[] = [];
  const due: Ring[] = [];
  for (const r of rows) {
    const k = Number(r.ord) - 1;
    if (r.job_id === null) {
      conflicted.push(inputs[k]!);
      continue;
    }
    results[k] = { id: String(r.job_id), queue: r.queue, created: true };
    if (r.due) due.push({ jobId: String(r.job_id), queue: r.queue, priority: r.priority });
  }
  if (conflicted.length) {
    const holderOf = await keyHolders(db, conflicted);
    const gone: number[] = [];
    inputs.forEach((input, k) => {
      if (results[k]) return;
      const hit = holderOf(input);
      if (hit) results[k] = { ...hit, created: false };
      else gone.push(k);
    });
    if (gone.length) {
      const keyless = gone.find((k) => inputs[k]!.idempotencyKey == null && inputs[k]!.singletonKey == null);
      if (keyless !== undefined) throw new Error(`an enqueue conflicted on ${conflictText(inputs[keyless]!)}`);
      // The job holding the key let it go in between (deleted, or finished): the key is free
      // again, and the insert is tried again.
      if (tries + 1 >= KEY_FREED_TRIES) throw new Error(`${conflictText(inputs[gone[0]!]!)} conflicted but no job holds it`);
      const retried = await enqueue(db, gone.map((k) => inputs[k]!), doorbell, tries + 1);
      gone.forEach((k, n) => (results[k] = retried[n]!));
    }
  }
  if (doorbell && due.length) {
    if (failpointsEnabled) await failpoint('after_commit_before_push', due.map((d) => d.jobId));
    if (!isSkipped('push')) await doorbell.ring(due);
  }
  return results;
}

/**
 * What an insert that was not made conflicted on, for an error: its keys, or — with none —
 * the job id (ON CONFLICT DO NOTHING has no target), which only a sequence set back behind the
 * table's ids (a restore without it) makes.
 */
const conflictText = (i: EnqueueInput) =>
  [i.idempotencyKey != null && `idempotency key ${JSON.stringify(i.idempotencyKey)}`, i.singletonKey != null && `singleton key ${JSON.stringify(i.singletonKey)}`]
    .filter(Boolean)
    .join(' or ') || 'the job id drawn from jobs_job_id_seq (the sequence is behind the ids in jobs: was the table restored without it?)';

/**
 * The jobs holding the keys of inputs whose insert conflicted (read after the insert, so they
 * include those committed by concurrent enqueuers): for an input, the job with its
 * idempotency key, else the unfinished job with its singleton key; undefined when neither
 * holds it any more.
 */
async function keyHolders(
  db: Executor,
  inputs: readonly EnqueueInput[],
): Promise<(i: EnqueueInput) => { id: string; queue: string; heldBy: EnqueueKey } | undefined> {
  const idem = inputs.flatMap((i) => (i.idempotencyKey != null ? [i.idempotencyKey] : []));
  const single = inputs.flatMap((i) => (i.singletonKey != null ? [i.singletonKey] : []));
  const [byIdem, bySingle] = await Promise.all([
    idem.length ? run(db, sql.jobIdsByIdempotencyKey, [idem]) : null,
    single.length ? run(db, sql.jobIdsBySingletonKey, [single]) : null,
  ]);
  const byKey = (result: pg.QueryResult | null, column: string, heldBy: EnqueueKey) =>
    new Map((result?.rows ?? []).map((r) => [r[column] as string, { id: String(r.job_id), queue: r.queue as string, heldBy }]));
  const idemHolders = byKey(byIdem, 'idempotency_key', 'idempotencyKey');
  const singleHolders = byKey(bySingle, 'singleton_key', 'singletonKey');
  return (i) => (i.idempotencyKey != null ? idemHolders.get(i.idempotencyKey) : undefined) ?? (i.singletonKey != null ? singleHolders.get(i.singletonKey) : undefined);
}

async function enqueueOne(db: Executor, i: EnqueueInput, doorbell: Doorbell | null | undefined, tries: number): Promise<EnqueueResult[]> {
  const { rows } = await run(db, sql.jobEnqueueOne, [
    i.queue ?? DEFAULT_QUEUE,
    i.type,
    JSON.stringify(i.payload ?? {}),
    i.maxAttempts ?? null,
    i.runAt ?? null,
    i.idempotencyKey ?? null,
    i.priority ?? DEFAULT_PRIORITY,
    i.singletonKey ?? null,
  ]);
  const r = rows[0];
  if (!r) {
    if (i.idempotencyKey == null && i.singletonKey == null) throw new Error(`an enqueue conflicted on ${conflictText(i)}`);
    const hit = (await keyHolders(db, [i]))(i);
    // Let go in between (deleted, or finished): the key is free again; another try.
    if (!hit && tries + 1 < KEY_FREED_TRIES) return enqueueOne(db, i, doorbell, tries + 1);
    if (!hit) throw new Error(`${conflictText(i)} conflicted but no job holds it`);
    return [{ ...hit, created: false }];
  }
  const result = { id: String(r.job_id), queue: r.queue as string, created: true };
  if (doorbell && r.due) {
    if (failpointsEnabled) await failpoint('after_commit_before_push', [result.id]);
    if (!isSkipped('push')) await doorbell.ring([{ jobId: result.id, queue: result.queue, priority: r.priority }]);
  }
  return [result];
}

// ------------------------------------------------------------------ workers

export interface ClaimParams {
  workerId: string;
  leaseMs: number;
  /**
   * May the claim include a suspect (a job whose last attempt was lost, perhaps because it
   * crashed its worker)? At most one is taken. Default true; a worker already holding a
   * suspect passes false.
   */
  allowSuspect?: boolean;
  /**
   * The job types the claimer has handlers for: jobs of other types are left for a worker
   * that has one. Absent or null: any type.
   */
  types?: readonly string[] | null;
}

/**
 * jobClaim — claim these ids (from a doorbell pop). Refused ids are simply absent.
 * Fresh due jobs go through one plain UPDATE (jobClaimFresh); whatever it leaves — an
 * expired lease to take over, a suspect, an id someone else claimed — is re-checked by the
 * full claim statement (at most one suspect), only when there is something left.
 */
export async function jobClaim(db: Executor, p: ClaimParams & { ids: readonly string[] }, into?: ClaimedJob[]): Promise<ClaimedJob[]> {
  if (p.ids.length === 0) return [];
  // Each statement's jobs go into `into` as it returns: if the second one fails, the caller
  // still holds (and runs) what the first one claimed.
  const claimed: ClaimedJob[] = [];
  const take = (rows: pg.QueryResultRow[]) => {
    const jobs = rows.map(toClaimedJob);
    claimed.push(...jobs);
    into?.push(...jobs);
  };
  try {
    take((await run(db, sql.jobClaimFresh, [intArray(p.ids), p.workerId, p.leaseMs, p.types ?? null])).rows);
  } catch (err) {
    // Claimers racing over the same ids can deadlock on the plain UPDATE (it locks rows in
    // heap order); PostgreSQL then aborts one of them, which claimed nothing. The full claim
    // below locks in id order and skips locked rows, so it cannot deadlock.
    if ((err as { code?: string }).code !== '40P01') throw err;
  }
  if (claimed.length === p.ids.length) return claimed;
  const got = new Set(claimed.map((j) => j.id));
  const rest = p.ids.filter((id) => !got.has(id));
  take((await run(db, sql.jobClaim, [intArray(rest), p.workerId, p.leaseMs, p.allowSuspect ?? true, p.types ?? null])).rows);
  return claimed;
}

/** jobClaimNext — claim up to `limit` of the oldest due jobs of a queue. */
export async function jobClaimNext(
  db: Executor,
  p: ClaimParams & { queue: string; limit: number },
): Promise<ClaimedJob[]> {
  const values = [p.queue, p.workerId, p.leaseMs, p.limit, p.allowSuspect ?? true];
  const { rows } = p.types ? await run(db, sql.jobClaimNextOfTypes, [...values, p.types]) : await run(db, sql.jobClaimNext, values);
  return rows.map(toClaimedJob);
}

/**
 * jobClaimNextAcross — claim up to `limit` due jobs of the handled `types` from several
 * queues: by priority across them, then queue by queue in the order given (rotate it between
 * calls, as the Redis pop's order is), then oldest first. Controlled queues are left out.
 */
export async function jobClaimNextAcross(
  db: Executor,
  p: ClaimParams & { queues: readonly string[]; limit: number; types: readonly string[] },
): Promise<ClaimedJob[]> {
  if (!p.queues.length) return [];
  const { rows } = await run(db, sql.jobClaimNextAcross(p.queues.length), [p.workerId, p.leaseMs, p.limit, p.allowSuspect ?? true, p.types, ...p.queues]);
  return rows.map(toClaimedJob);
}

/**
 * jobClaimExpired — take over up to `limit` jobs of a queue whose lease expired (one lost
 * lease each: what a crashed or stalled peer leaves). A job lost twice in a row is a
 * suspect: at most one, and none when allowSuspect is false.
 */
export async function jobClaimExpired(db: Executor, p: ClaimParams & { queue: string; limit?: number }): Promise<ClaimedJob[]> {
  const { rows } = await run(db, sql.jobClaimExpired, [p.queue, p.workerId, p.leaseMs, p.limit ?? 1, p.allowSuspect ?? true, p.types ?? null]);
  return rows.map(toClaimedJob);
}

export interface HeartbeatResult {
  /** Leases renewed, with whether an operator asked to cancel the job. */
  renewed: Map<string, { cancelRequested: boolean }>;
  /** Jobs whose row another transaction held locked: not renewed this time, not lost either. */
  busy: Set<string>;
}

/**
 * jobHeartbeat — renew every lease this worker holds in one statement. A lease missing
 * from `renewed` is lost: the caller aborts that handler and writes nothing for it.
 */
export async function jobHeartbeat(
  db: Executor,
  p: { workerId: string; leaseMs: number; leases: readonly Lease[] },
): Promise<HeartbeatResult> {
  const renewed = new Map<string, { cancelRequested: boolean }>();
  const busy = new Set<string>();
  if (p.leases.length === 0) return { renewed, busy };
  const { rows } = await run(db, sql.jobHeartbeat, [
    intArray(p.leases.map((l) => l.jobId)),
    byJobId(p.leases, (l) => l.attempt),
    p.workerId,
    p.leaseMs,
  ]);
  for (const r of rows) {
    if (r.busy) busy.add(String(r.job_id));
    else renewed.set(String(r.job_id), { cancelRequested: r.cancel_requested });
  }
  return { renewed, busy };
}

/** jobCheckpoint — fenced save of a running job's progress; false = the lease is lost. */
export async function jobCheckpoint(
  db: Executor,
  p: { workerId: string; lease: Lease; name: string; value: unknown },
): Promise<boolean> {
  const { rowCount } = await run(db, sql.jobCheckpoint, [
    p.lease.jobId,
    p.workerId,
    p.lease.attempt,
    p.name,
    JSON.stringify(p.value ?? null),
  ]);
  return rowCount === 1;
}

/** jobComplete — fenced success; returns the ids whose completion was accepted. */
export async function jobComplete(
  db: Executor,
  p: { workerId: string; items: readonly (Lease & { resultKey?: string | null })[] },
): Promise<Set<string>> {
  if (p.items.length === 0) return new Set();
  const { rows } = await run(db, sql.jobComplete, [
    intArray(p.items.map((i) => i.jobId)),
    byJobId(p.items, (i) => i.attempt),
    byJobId(p.items, (i) => i.resultKey ?? null),
    p.workerId,
  ]);
  return new Set(rows.map((r) => String(r.job_id)));
}

/**
 * attemptOutcomes — how these attempts of this worker ended (the attempt history), for a
 * refused retry: an earlier try whose answer was lost may have been recorded.
 */
export async function attemptOutcomes(
  db: Executor,
  p: { workerId: string; leases: readonly Lease[] },
): Promise<Map<string, AttemptOutcome>> {
  if (p.leases.length === 0) return new Map();
  const { rows } = await run(db, sql.attemptOutcomes, [
    intArray(p.leases.map((l) => l.jobId)),
    intArray(p.leases.map((l) => l.attempt)),
    p.workerId,
  ]);
  return new Map(rows.map((r) => [String(r.job_id), r.outcome as AttemptOutcome]));
}

/** The leases a worker holds by the database (its running jobs): see jobsHeldBy. */
export async function leasesHeldBy(db: Executor, p: { workerId: string }): Promise<Lease[]> {
  const { rows } = await run(db, sql.jobsHeldBy, [p.workerId]);
  return rows.map((r) => ({ jobId: String(r.job_id), attempt: Number(r.attempt_count) }));
}

export interface FailItem extends Lease {
  error: string;
  stack?: string | null;
  /** Fail at once, without retries. */
  permanent?: boolean;
  /** Delay before the retry (ignored when the job goes to `failed`), or the snooze's. */
  backoffMs: number;
  /** Not a failure: the handler put the job off (SnoozeError). Queued for after backoffMs, the attempt given back; `error` is its message. */
  snooze?: boolean;
}

/** jobFail — fenced failure (or snooze); returns the new status of each job whose failure was accepted (`queued`: snoozed). */
export async function jobFail(
  db: Executor,
  p: { workerId: string; items: readonly FailItem[] },
): Promise<Map<string, { status: JobStatus; queue: string; runAt: Date }>> {
  const out = new Map<string, { status: JobStatus; queue: string; runAt: Date }>();
  if (p.items.length === 0) return out;
  const { rows } = await run(db, sql.jobFail, [
    p.items.map((i) => i.jobId),
    byJobId(p.items, (i) => i.attempt),
    byJobId(p.items, (i) => i.error),
    byJobId(p.items, (i) => i.stack ?? null),
    byJobId(p.items, (i) => !!i.permanent),
    byJobId(p.items, (i) => Math.max(0, Math.round(i.backoffMs))),
    p.workerId,
    byJobId(p.items, (i) => !!i.snooze),
  ]);
  for (const r of rows) out.set(String(r.job_id), { status: r.status, queue: r.queue, runAt: r.run_at });
  return out;
}

/** jobCancelAck — the handler stopped after an operator's cancel: finish as cancelled. Returns the jobs ended, by id. */
export async function jobCancelAck(
  db: Executor,
  p: { workerId: string; leases: readonly Lease[] },
): Promise<Map<string, JobKind>> {
  if (p.leases.length === 0) return new Map();
  const { rows } = await run(db, sql.jobCancelAck, [
    p.leases.map((l) => l.jobId),
    byJobId(p.leases, (l) => l.attempt),
    p.workerId,
  ]);
  return new Map(rows.map((r) => [String(r.job_id), { queue: r.queue as string, type: r.type as string }]));
}

/** jobRelease — hand leases back (shutdown): the jobs are queued again, due now. */
export async function jobRelease(
  db: Executor,
  p: { workerId: string; leases: readonly Lease[]; reason: string; doorbell?: Doorbell | null },
): Promise<Ring[]> {
  if (p.leases.length === 0) return [];
  const { rows } = await run(db, sql.jobRelease, [
    p.leases.map((l) => l.jobId),
    byJobId(p.leases, (l) => l.attempt),
    p.workerId,
    p.reason,
  ]);
  const rings = rows.map((r) => ({ jobId: String(r.job_id), queue: r.queue as string, priority: r.priority as number }));
  if (p.doorbell) await p.doorbell.ring(rings, { front: true });
  return rings;
}

// ------------------------------------------------------------------ operators

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
 * Would `action`'s compare accept this job as it stands? The statements' conditions, on this
 * server's clock: what a preview predicts (bulk.ts predict) and why a report says a skipped
 * job was left alone.
 */
export function actionApplies(
  action: Parameters<typeof describeRefusal>[0],
  job: Pick<CurrentRow, 'status' | 'runAt' | 'cancelRequestedAt' | 'leaseRemainingMs' | 'singletonHolder'>,
): boolean {
  const requeueable =
    (['failed', 'cancelled', 'completed', 'retrying'].includes(job.status) || (job.status === 'queued' && job.runAt.getTime() > Date.now())) && !job.singletonHolder;
  switch (action) {
    case 'requeue':
      return requeueable;
    case 'revoke':
      return requeueable || job.status === 'running';
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

const uniq = (ids: readonly string[]) => [...new Set(ids)];

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
 * Tries of a requeue that lost a race for a singleton key, which rolled it back whole:
 * - an enqueue or another requeue took the key of a job it requeues after its snapshot was
 *   taken, so its insert into jobs_singleton_key_idx failed (23505). The next try sees the
 *   holder and leaves that job alone.
 * - a producer's transaction holding one key it requeues waits for another it holds (40P01:
 *   the statement writes the keys in its plan's order, the producer in its own).
 * Each try can only lose to yet another statement taking a key.
 */
const SINGLETON_RACE_TRIES = 5;

async function retriedOnSingletonRace<T>(statement: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await statement();
    } catch (err) {
      const e = err as { code?: string; constraint?: string };
      const lost = (e.code === '23505' && e.constraint === 'jobs_singleton_key_idx') || e.code === '40P01';
      if (tries >= SINGLETON_RACE_TRIES || !lost) throw err;
    }
  }
}

/**
 * For a requeue's preview: which of these jobs would be left alone for their singleton key,
 * and the job holding it (as the statement decides, see statements.ts requeueTargets): a
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
    const { rows } = await retriedOnSingletonRace(() => run(db, sql.jobRequeue, [these, !!p.resetAttempts, seenParam(these, p.seen)]));
    for (const r of rows) changed.set(String(r.job_id), { outcome: 'requeued', job: toJob(r) });
    await dropResults(p.results, rows.map((r) => r.dropped_result_key));
  };
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
  if (p.doorbell) await p.doorbell.ring([...changed.values()].map(({ job }) => ({ jobId: job!.id, queue: job!.queue, priority: job!.priority })));
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

/**
 * Deletes the result blobs no job points to any more (a deleted job's, a requeued job's
 * last result): nothing else would, and an administrator deleting jobs expects their
 * results gone too. After the statement that let them go has committed — callers pass a
 * pool, not a transaction — so a rollback can never leave a job pointing to a deleted blob.
 * A blob that cannot be deleted is logged and left (the action itself has happened).
 */
async function dropResults(results: ResultStore | null | undefined, keys: (string | null)[]) {
  if (!results) return;
  await eachAtMost(RESULT_DELETES_AT_ONCE, keys.filter((k): k is string => !!k), (key) =>
    results.delete(key).catch((err) => log.warn('could not delete a result no job points to any more', { key, err })),
  );
}

/**
 * Deletes the results of deleted jobs (an operator's delete, retention): every result of
 * each, where the store can find them (an attempt that crashed after writing its result
 * left one nothing points to), else the one each pointed to. After the statement has
 * committed — and for retention, after the sweep has let go of its lock and connection. A
 * result that cannot be deleted is logged and left.
 */
export async function dropDeletedResults(results: ResultStore | null | undefined, jobs: readonly PrunedResult[]) {
  if (!results || !jobs.length) return;
  const deleteAll = results.deleteAll?.bind(results);
  if (!deleteAll) return dropResults(results, jobs.map((j) => j[1]));
  await eachAtMost(RESULT_DELETES_AT_ONCE, jobs, ([id]) =>
    deleteAll(id).catch((err) => log.warn('could not delete the results of a deleted job', { job: id, err })),
  );
}

/**
 * Result deletes in flight at once: one at a time, a bulk delete of 1,000 jobs with
 * results spent 0.5–1.2 s in the filesystem; 16 at once, 0.3–0.4 s, without opening
 * a thousand files together.
 */
const RESULT_DELETES_AT_ONCE = 16;

/** Runs `f` on every item, at most `n` at a time. */
async function eachAtMost<T>(n: number, items: readonly T[], f: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await f(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
}

// ------------------------------------------------------------------ recover

export interface RecoverParams {
  /** Preview only: list what would move and what would be re-signalled. */
  dryRun?: boolean;
  /** Restrict the expired-lease part to these jobs (an operator's selection). */
  ids?: readonly string[] | null;
  /** Rows per statement. */
  batchSize?: number;
  /** Most rows moved by one call (the rest wait for the next sweep). */
  maxRows?: number;
  doorbell?: Doorbell | null;
  /** A due job waiting longer than this is re-signalled. */
  signalGraceMs?: number;
  /** Most due jobs looked at per queue per call: at most this many ids are pushed per queue. */
  signalCap?: number;
  /**
   * A worker counts as live when it reported this recently (the lease): only jobs some live
   * worker on the queue has the handler for are re-signalled. Default one minute.
   */
  aliveWithinMs?: number;
}

export interface RecoverExpiredItem {
  id: string;
  queue: string;
  type: string;
  workerId: string | null;
  attemptCount: number;
  maxAttempts: number;
  expiredMs: number;
  /** The status it moved to (or would move to, in a preview). */
  status: JobStatus;
}

export interface RecoverSignalItem {
  id: string;
  queue: string;
  type: string;
  status: JobStatus;
  waitedMs: number;
}

export interface RecoverReport {
  dryRun: boolean;
  /** Running jobs whose lease expired: moved to retrying / failed / cancelled. */
  expired: RecoverExpiredItem[];
  /** Due jobs that waited past the grace with too few ids in the signal: rung again. */
  resignalled: RecoverSignalItem[];
  /** Per queue: ids waiting in Redis (null without Redis) and how many were pushed. */
  queues: { queue: string; signalBacklog: number | null; pushed: number }[];
  /**
   * `expired` reached its limit, so more expired leases may be there: a preview lists at
   * most RECOVER_PREVIEW_LIMIT (a run would move them all, up to its maxRows); a run moves
   * at most maxRows (the next sweep takes the rest).
   */
  moreMayChange: boolean;
}

/** A row of the recover statements (the preview's or the sweep's) as the report lists it. */
const expiredItem = (r: pg.QueryResultRow, status: RecoverExpiredItem['status']): RecoverExpiredItem => ({
  id: String(r.job_id),
  queue: r.queue,
  type: r.type,
  workerId: r.worker_id,
  attemptCount: r.attempt_count,
  maxAttempts: r.max_attempts,
  expiredMs: Math.round(Number(r.expired_ms)),
  status,
});

/** The most expired leases a dry run lists (a run moves up to its maxRows, 10,000 by default). */
export const RECOVER_PREVIEW_LIMIT = 1_000;

/**
 * jobRecover — the recover sweep (periodic in every worker, and an operator action):
 *  1. running jobs whose lease expired → retrying (or failed / cancelled), in batches,
 *     each row re-checked in the statement that moves it;
 *  2. due jobs still waiting after the grace are rung again when Redis holds fewer ids
 *     for their queue than there are such jobs (looking at no more than `signalCap` per
 *     queue): those whose id is not in the list. A backlog of a million queued jobs costs
 *     at most signalCap pushes per queue per sweep, and none while Redis holds enough.
 */
export async function jobRecover(db: Executor, p: RecoverParams = {}): Promise<RecoverReport> {
  const batch = p.batchSize ?? 500;
  const maxRows = p.maxRows ?? 10_000;
  const ids = p.ids ? uniq(p.ids) : null;
  const out: RecoverReport = { dryRun: !!p.dryRun, expired: [], resignalled: [], queues: [], moreMayChange: false };

  if (p.dryRun) {
    const limit = Math.min(maxRows, RECOVER_PREVIEW_LIMIT);
    const { rows } = await run(db, sql.jobRecoverPreview, [limit, ids]);
    out.moreMayChange = rows.length >= limit;
    out.expired = rows.map((r) => expiredItem(r, r.would_become));
  } else {
    const rings: Ring[] = [];
    while (out.expired.length < maxRows) {
      const { rows } = await run(db, sql.jobRecoverExpired, [Math.min(batch, maxRows - out.expired.length), ids]);
      for (const r of rows) {
        out.expired.push(expiredItem(r, r.status));
        if (r.status === 'retrying') rings.push({ jobId: String(r.job_id), queue: r.queue, priority: r.priority });
      }
      if (rows.length < batch) break;
    }
    out.moreMayChange = out.expired.length >= maxRows;
    // Recovered jobs are the oldest waiting: they go to the front of the line.
    if (p.doorbell) await p.doorbell.ring(rings, { front: true });
  }

  // Signal repair (skipped when an operator recovers a selection of running jobs).
  if (ids) return out;
  const grace = p.signalGraceMs ?? 1_000;
  const cap = p.signalCap ?? 1_000;
  const { rows: queues } = await run(db, sql.jobDueQueues, []);
  for (const { queue } of queues) {
    // The ids waiting in Redis, read before the due jobs (an id popped in between is a claim
    // under way, not a lost ring): every one of them while there are fewer than the cap.
    const backlog = p.doorbell ? await p.doorbell.backlog(queue) : null;
    const waiting = backlog === 0 ? [] : backlog !== null && backlog < cap ? ((await p.doorbell?.peek?.(queue, cap)) ?? null) : null;
    const whole = waiting !== null && waiting.length < cap;
    const { rows: [live] } = await run(db, sql.queueHandledTypes, [queue, Math.round(p.aliveWithinMs ?? 60_000)]);
    const { rows } = live?.types
      ? await run(db, sql.jobDueWaitingOfTypes, [queue, grace, cap, live.types])
      : await run(db, sql.jobDueWaiting, [queue, grace, cap]);
    // Ids already waiting will wake a worker: ring exactly the jobs the list lacks. (Not the
    // oldest up to the shortfall: a recovered or released job keeps its place in line, its
    // old run_at, and its ring went to the front, so the oldest often do have one.) With at
    // least `cap` ids waiting, as many as such jobs can be, none: however long the backlog,
    // no flood of pushes. Without Redis, every such job is rung (by NOTIFY).
    const rung = whole ? new Set(waiting) : null;
    const lacking = rung ? rows.filter((r) => !rung.has(String(r.job_id))) : rows.slice(0, Math.max(0, rows.length - (backlog ?? 0)));
    const items = lacking.map((r) => ({
      id: String(r.job_id),
      queue,
      type: r.type,
      status: r.status,
      waitedMs: Math.round(Number(r.waited_ms)),
    }));
    out.resignalled.push(...items);
    let pushed = 0;
    if (!p.dryRun && p.doorbell && items.length) {
      await p.doorbell.ring(lacking.map((r) => ({ jobId: String(r.job_id), queue, priority: r.priority })), { front: true });
      pushed = items.length;
    }
    out.queues.push({ queue, signalBacklog: backlog, pushed });
  }
  return out;
}

/**
 * ensureJobStatistics — ANALYZE the jobs table if it has rows but no planner statistics yet
 * (see jobsNeverAnalyzed); after that, autovacuum keeps them. A worker runs it before its
 * first claim, and every sweep (for a table that was empty at start). One process at a time
 * (the others skip), and bounded: a lock it cannot get within a second, or an ANALYZE past a
 * minute, gives up until the next sweep. 'refused': the role may not analyze the table (not
 * its owner), so it has no statistics still.
 */
export async function ensureJobStatistics(pool: pg.Pool): Promise<'analyzed' | 'refused' | null> {
  return useConnection(pool, async (client) => {
    if ((await run(client, sql.jobsNeverAnalyzed, [])).rows[0]?.never !== true) return null;
    await client.query('BEGIN');
    try {
      const { rows } = await client.query(`SELECT pg_try_advisory_xact_lock(hashtext('leasehold.analyze')) AS mine`);
      if (!rows[0].mine) return null; // another process is analyzing it
      await client.query(`SET LOCAL lock_timeout = '1s'`);
      await client.query(`SET LOCAL statement_timeout = '60s'`);
      if ((await run(client, sql.jobsNeverAnalyzed, [])).rows[0]?.never !== true) return null; // done meanwhile
      // Its own client-side timeout, past the server's: the pool's (a worker's lease) may be shorter.
      await client.query({ text: 'ANALYZE jobs', query_timeout: 70_000 } as pg.QueryConfig);
      // A role that does not own the table gets a warning, not an error, and no statistics.
      return (await run(client, sql.jobsNeverAnalyzed, [])).rows[0]?.never === true ? 'refused' : 'analyzed';
    } finally {
      await client.query('COMMIT');
    }
  });
}

// ------------------------------------------------------------------ retention

/** How long finished jobs are kept, per status (null: for ever). */
export interface Retention {
  completedMs: number | null;
  failedMs: number | null;
  cancelledMs: number | null;
}

/** Ids one prune statement reads: a range of the primary key (the statement stays short). */
export const PRUNE_RANGE = 5_000;
/** Most time one sweep spends pruning (statement after statement): the rest waits for the next sweep. */
export const PRUNE_BUDGET_MS = 500;
/**
 * After a walk reached the young jobs (or the table's end), the next one waits this long:
 * deleting a week-old job a minute later costs nothing, while walking again at once would
 * re-read every job kept longer (a dead letter kept for ever), sweep after sweep, for nothing.
 */
export const PRUNE_REST_MS = 60_000;

/** A deleted job whose results are to be deleted: [job id, the result it pointed to or null]. */
export type PrunedResult = [jobId: string, key: string | null];

export interface PruneReport {
  /** Jobs deleted (their attempt history with them). */
  deleted: number;
  /** Ids read. */
  scanned: number;
  /** Where the next range starts: '0' once a range reached young jobs or the end of the table. */
  cursor: string;
  /** The walk rests (see PRUNE_REST_MS): nothing was read. */
  resting: boolean;
  /** Jobs that ran or point to a result: dropDeletedResults, once the sweep has let go of its lock. */
  results: PrunedResult[];
}

/** The windows in the statement's order (completed, failed, cancelled); null where kept for ever (0 too). */
const windowsOf = (r: Retention) => [r.completedMs, r.failedMs, r.cancelledMs].map((w) => (w !== null && w > 0 ? w : null));
const keeps = (r: Retention | null | undefined): r is Retention => !!r && windowsOf(r).some((w) => w !== null);

/**
 * jobPrune — retention, one range of ids from `cursor` (see statements.jobPrune): deletes the
 * finished jobs of the range past their status's window, with their attempt history.
 */
export async function jobPrune(
  db: Executor,
  p: { retention: Retention; cursor: string; range?: number },
): Promise<Omit<PruneReport, 'resting'>> {
  const windows = windowsOf(p.retention);
  const set = windows.filter((v): v is number => v !== null);
  if (!set.length) return { deleted: 0, scanned: 0, cursor: p.cursor, results: [] };
  const range = p.range ?? PRUNE_RANGE;
  const { rows } = await run(db, sql.jobPrune, [p.cursor, range, ...windows, Math.min(...set)]);
  const r = rows[0];
  const atEnd = r.young || r.scanned < range;
  return { deleted: r.deleted, scanned: r.scanned, cursor: atEnd || r.last_id === null ? '0' : r.last_id, results: r.results };
}

/**
 * pruneFor — the walk every sweeping process shares (its position in retention_walk): ranges
 * one after another from where it stands, until the budget is spent or the walk reaches
 * young jobs; then it rests `restMs` (for every process) before it starts again from the
 * bottom. Run under the sweep's lock (recoverSweep), so one process walks at a time.
 */
export async function pruneFor(
  db: Executor,
  p: { retention: Retention; budgetMs?: number; range?: number; restMs?: number },
): Promise<PruneReport> {
  const walk = (await run(db, sql.pruneWalkRead, [])).rows[0] ?? { cursor: '0', resting: false };
  const out: PruneReport = { deleted: 0, scanned: 0, cursor: walk.cursor, resting: walk.resting, results: [] };
  if (out.resting) return out;
  const until = performance.now() + (p.budgetMs ?? PRUNE_BUDGET_MS);
  do {
    const r = await jobPrune(db, { ...p, cursor: out.cursor });
    out.deleted += r.deleted;
    out.scanned += r.scanned;
    out.cursor = r.cursor;
    out.results.push(...r.results);
  } while (out.cursor !== '0' && performance.now() < until);
  await run(db, sql.pruneWalkWrite, [out.cursor, out.cursor === '0', p.restMs ?? PRUNE_REST_MS]);
  return out;
}

/** The server takes client_connection_check_interval (see recoverSweep); false once refused. */
let connectionCheck = true;

/**
 * recoverSweep — one periodic sweep, run by at most one process at a time cluster-wide
 * (a session advisory lock on a dedicated connection). The lock must never outlive the
 * sweeper's ability to sweep: a process that dies loses its session (and the lock) at
 * once, and one that stalls (SIGSTOP, a partition) holding it is cut off by the server's
 * idle_session_timeout, so a frozen sweeper cannot stop recovery for everyone; nor can a
 * statement its sweeper gave up on (client_connection_check_interval).
 * The sweeper also gives the jobs table its first planner statistics (ensureJobStatistics).
 * Returns null when another process holds the lock.
 */
let sampleRefusalSaid = false;

export async function recoverSweep(
  pool: pg.Pool,
  p: RecoverParams & {
    stallTimeoutMs?: number;
    /** Finished jobs past these windows are deleted (null: kept), on the walk every sweeper shares. */
    retention?: Retention | null;
    /** Where pruned jobs' results are deleted from, once the sweep has let go of its lock. */
    results?: ResultStore | null;
    /** Who sweeps (a worker id), recorded with the time of the sweep. */
    sweeper?: string | null;
  },
): Promise<(RecoverReport & { analyzed: 'analyzed' | 'refused' | null; pruned: PruneReport | null }) | null> {
  const client = await pool.connect();
  let locked = false;
  let broken: unknown;
  let out: RecoverReport & { analyzed: 'analyzed' | 'refused' | null; pruned: PruneReport | null };
  try {
    await client.query(`SET idle_session_timeout = ${Math.max(1_000, Math.round(p.stallTimeoutMs ?? 10_000))}`);
    // And one whose client gave up on a statement (its query timeout: the connection is then
    // discarded) is ended by the server within a second: waiting for a row lock, a server
    // process notices no client gone by itself, and would hold the sweep lock while it waits.
    // Refused where the server cannot tell a closed socket (Windows; some managed services):
    // the sweep goes on without it, and does not ask again.
    if (connectionCheck) await client.query('SET client_connection_check_interval = 1000').catch(() => (connectionCheck = false));
    locked = (await run(client, sql.recoverTryLock, [])).rows[0]?.locked === true;
    if (!locked) return null;
    const report = await jobRecover(client, { ...p, dryRun: false });
    // Recorded once the recovery is done: the console warns when this grows old while
    // workers are alive (the lock held by a session that does not sweep, or every sweep
    // failing). Only a record: a refusal (a role without the right) never stops a sweep.
    await run(client, sql.recoverSwept, [p.sweeper ?? null]).catch(() => {});
    // The counters' record for the overview's 24-hour and 7-day views: one sample a minute,
    // written here so that one process writes it. Never in the way of a sweep either.
    // A refusal the server answered (a role without the right) is said once; a timeout or a
    // lost connection breaks the sweep, whose connection is then discarded, as for its other steps.
    const sampled = await recordStatsSample(client).catch((err) => {
      if (!answeredByServer(err)) throw err;
      if (!sampleRefusalSaid) log.warn('could not record the stats sample (the overview\'s 24-hour and 7-day views); said once', { err });
      sampleRefusalSaid = true;
      return false;
    });
    // With the minute's sample, worker rows silent for a week are folded into the archive (on
    // a connection of its own, in its own transaction): the table keeps the recent ones.
    if (sampled) await foldOldWorkers(pool).catch((err) => log.warn('could not fold old worker rows into the archive; the next minute tries again', { err }));
    // After the recovery, in its time budget: history never delays a job that is stuck.
    const pruned = keeps(p.retention) ? await pruneFor(client, { retention: p.retention }) : null;
    // On a connection of its own, and never in the way of the recovery above.
    const analyzed = await ensureJobStatistics(pool).catch(() => null);
    out = { ...report, analyzed, pruned };
  } catch (err) {
    broken = err;
    throw err;
  } finally {
    if (!broken && locked) await run(client, sql.recoverUnlock, []).catch((err) => (broken = err));
    if (!broken) await client.query('RESET idle_session_timeout; RESET client_connection_check_interval').catch((err) => (broken = err));
    // A connection that failed mid-sweep (or may still hold the lock) is discarded, not reused.
    client.release(broken ? new Error('recover sweep connection discarded', { cause: broken }) : undefined);
  }
  await dropDeletedResults(p.results, out.pruned?.results ?? []);
  return out;
}

// ------------------------------------------------------------------ queue controls

export interface QueueControl {
  name: string;
  paused: boolean;
  pausedAt: Date | null;
  concurrencyLimit: number | null;
  rateLimit: number | null;
  ratePeriodMs: number | null;
  /** Whole tokens left in the rate bucket now (database clock); null without a rate limit. */
  rateTokens: number | null;
  /** Jobs of the queue running now (over all workers). */
  running: number;
}

const toControl = (r: any): QueueControl => ({
  name: r.name,
  paused: r.paused_at !== null,
  pausedAt: r.paused_at,
  concurrencyLimit: r.concurrency_limit,
  rateLimit: r.rate_limit,
  ratePeriodMs: r.rate_period_ms,
  rateTokens: r.tokens === null || r.tokens === undefined ? null : Math.floor(Number(r.tokens)),
  running: Number(r.running ?? 0),
});

/** The controls of these queues (null = every controlled queue); a queue absent from the answer has none. */
export async function queueControls(db: Executor, names: readonly string[] | null = null): Promise<QueueControl[]> {
  const { rows } = await run(db, sql.queueControlsRead, [names]);
  return rows.map(toControl);
}

/**
 * queueSetControls — pause or resume a queue, and set (n > 0) or clear (0) its global
 * concurrency limit and its rate limit (rateLimit claims per ratePeriodMs, over every
 * worker). Fields left undefined keep their value. Returns the queue's controls (none
 * left = the queue is back on the fast path).
 */
export async function queueSetControls(
  db: Executor,
  p: { name: string; paused?: boolean; concurrencyLimit?: number; rateLimit?: number; ratePeriodMs?: number },
): Promise<QueueControl | null> {
  if (p.rateLimit && !p.ratePeriodMs) throw new QueueError('invalid_request', 'a rate limit needs its period (ratePeriodMs)');
  await run(db, sql.queueControlsSet, [p.name, p.paused ?? null, p.concurrencyLimit ?? null, p.rateLimit ?? null, p.ratePeriodMs ?? null]);
  await run(db, sql.queueControlsPrune, [p.name]);
  return (await queueControls(db, [p.name]))[0] ?? null;
}

/**
 * jobClaimControlled — claim due jobs of a paused or limited queue within its limits: the
 * queue's row lock, then the claim, in one transaction (so concurrent claimers on any host
 * count each other's running jobs).
 */
export async function jobClaimControlled(
  pool: pg.Pool,
  p: ClaimParams & { queue: string; limit: number },
): Promise<ClaimedJob[]> {
  return useTransaction(pool, async (client) => {
    await run(client, sql.queueLock, [p.queue]);
    const values = [p.queue, p.workerId, p.leaseMs, p.limit, p.allowSuspect ?? true];
    const { rows } = p.types
      ? await run(client, sql.jobClaimControlledOfTypes, [...values, p.types])
      : await run(client, sql.jobClaimControlled, values);
    return rows.map(toClaimedJob);
  });
}

// ------------------------------------------------------------------ schedules

export interface ScheduleInput {
  name: string;
  /** Five fields, or six with seconds first ("* * * * * *" = every second). */
  cron: string;
  timezone?: string;
  queue?: string;
  type: string;
  payload?: unknown;
  maxAttempts?: number;
  /** The priority of the jobs it enqueues (0, the default, runs first; see job.ts PRIORITY_LEVELS). */
  priority?: number;
  enabled?: boolean;
  /**
   * 'allow' (the default): every tick enqueues a job. 'skip': no second run while one is
   * unfinished — its jobs hold the singleton key scheduleSingletonKey(name), and a tick that
   * meets a run of it still queued, retrying or running is skipped (a Run now returns that run).
   * Left out of a redefinition, it stays what it was (as `enabled`); it applies to the runs
   * made from then on (a run made before a switch to 'skip' holds no key).
   */
  overlap?: ScheduleOverlap;
}

export interface Schedule extends Required<Omit<ScheduleInput, 'payload'>> {
  payload: unknown;
  nextRunAt: Date;
  lastRunAt: Date | null;
  lastJobId: string | null;
  /** Why the due tick could not be enqueued (it is retried); null once a tick goes through. */
  lastError: string | null;
  lastErrorAt: Date | null;
  /** Paused by an operator (no tick is enqueued until a resume); not part of the definition. */
  paused: boolean;
  pausedAt: Date | null;
  /** The last tick skipped because a run was unfinished (overlap 'skip'), and that run's job. */
  lastSkippedAt: Date | null;
  lastSkippedJobId: string | null;
}

const toSchedule = (r: any): Schedule => ({
  name: r.name,
  cron: r.cron,
  timezone: r.timezone,
  queue: r.queue,
  type: r.type,
  payload: r.payload,
  maxAttempts: r.max_attempts,
  priority: r.priority,
  enabled: r.enabled,
  nextRunAt: r.next_run_at,
  lastRunAt: r.last_run_at,
  lastJobId: r.last_job_id === null ? null : String(r.last_job_id),
  lastError: r.last_error,
  lastErrorAt: r.last_error_at,
  paused: r.paused_at !== null,
  pausedAt: r.paused_at,
  overlap: r.overlap,
  lastSkippedAt: r.last_skipped_at,
  lastSkippedJobId: r.last_skipped_job_id === null ? null : String(r.last_skipped_job_id),
});

/**
 * scheduleUpsert — define or redefine a recurring job (its first tick follows the database
 * clock). `enabled` left out: a new one is, a redefined one keeps what it was. `onlyNew`: a
 * name already taken is refused (409), not redefined (the console's New schedule).
 */
export async function scheduleUpsert(db: Executor, s: ScheduleInput, opts: { onlyNew?: boolean } = {}): Promise<Schedule> {
  // Refused here, where it is defined, rather than by the jobs table at every tick: the
  // tick's job would break a constraint (its idempotency key is `schedule:<name>:<tick>`,
  // at most 255 characters), and the schedule would never run.
  const problem = scheduleProblem(s);
  if (problem) throw new QueueError('invalid_request', `schedule ${JSON.stringify(s.name.slice(0, 80))}: ${problem}`);
  const { rows: [{ now }] } = await run(db, sql.dbClock, []);
  const tz = s.timezone ?? 'UTC';
  const first = nextTick(s.cron, tz, now, s.name);
  const { rows } = await run(db, opts.onlyNew ? sql.scheduleCreate : sql.scheduleUpsert, [
    s.name, s.cron, tz, s.queue ?? DEFAULT_QUEUE, s.type, JSON.stringify(s.payload ?? {}), s.maxAttempts ?? null, first, s.enabled ?? null,
    s.priority ?? DEFAULT_PRIORITY, s.overlap ?? null,
  ]);
  if (!rows[0]) throw new QueueError('state_forbids', `a schedule named ${JSON.stringify(s.name.slice(0, 200))} exists already: edit it, or choose another name`);
  return toSchedule(rows[0]);
}

/** Schedule names are at most this long (the tick's idempotency key must fit in 255). */
export const SCHEDULE_NAME_MAX = 200;

function scheduleProblem(s: ScheduleInput): string | null {
  const text = (v: string | undefined, what: string) => (v !== undefined && (v.length < 1 || v.length > 200) ? `${what} must have 1 to 200 characters` : null);
  if (s.name.length < 1 || s.name.length > SCHEDULE_NAME_MAX) return `the name must have 1 to ${SCHEDULE_NAME_MAX} characters`;
  if (s.maxAttempts !== undefined && !(Number.isInteger(s.maxAttempts) && s.maxAttempts >= 1)) return 'maxAttempts must be a whole number of at least 1';
  if (s.priority !== undefined && !(Number.isInteger(s.priority) && s.priority >= 0 && s.priority < PRIORITY_LEVELS)) {
    return `priority must be a whole number from 0 to ${PRIORITY_LEVELS - 1}`;
  }
  if (s.overlap !== undefined && !SCHEDULE_OVERLAPS.includes(s.overlap)) return `overlap must be one of ${SCHEDULE_OVERLAPS.join(', ')}`;
  return text(s.queue, 'the queue') ?? text(s.type, 'the type');
}

export async function scheduleDelete(db: Executor, name: string): Promise<boolean> {
  return ((await run(db, sql.scheduleDelete, [name])).rowCount ?? 0) > 0;
}

export async function scheduleList(db: Executor): Promise<Schedule[]> {
  return (await run(db, sql.scheduleList, [])).rows.map(toSchedule);
}

/** What an operator's pause or resume did: the schedule as it is now, and whether it changed (false: it already was). */
export interface ScheduleChange {
  schedule: Schedule;
  changed: boolean;
}

const noSchedule = (name: string) => new QueueError('not_found', `no schedule ${JSON.stringify(name.slice(0, 200))}`);

/** The schedule's row, with the database clock; not_found when there is none. */
async function scheduleRow(db: Executor, name: string) {
  const row = (await run(db, sql.scheduleGet, [name])).rows[0];
  if (!row) throw noSchedule(name);
  return row;
}

/**
 * schedulePause — stop a schedule's ticks until it is resumed (an operator's; the definition's
 * `enabled` is left alone). Pausing a paused schedule changes nothing and says so
 * (`changed: false`), as a queue's pause does. not_found for no such schedule.
 */
export async function schedulePause(db: Executor, name: string): Promise<ScheduleChange> {
  const { rows } = await run(db, sql.schedulePause, [name]);
  if (rows[0]) return { schedule: toSchedule(rows[0]), changed: true };
  return { schedule: toSchedule(await scheduleRow(db, name)), changed: false };
}

/**
 * scheduleResume — let a paused schedule tick again, from its next tick after now (database
 * clock): the ticks it missed while paused are not owed, so a resume never makes a burst of
 * runs. Resuming a running schedule changes nothing (`changed: false`).
 */
export async function scheduleResume(db: Executor, name: string): Promise<ScheduleChange> {
  // The next tick is computed here (cron-parser), then swapped in on the cron it was computed
  // from: a redefinition landing in between makes the statement refuse, and it is read again.
  for (let k = 0; k < 3; k++) {
    const row = await scheduleRow(db, name);
    if (row.paused_at === null) return { schedule: toSchedule(row), changed: false };
    const next = nextTick(row.cron, row.timezone, row.db_now, row.name);
    const { rows } = await run(db, sql.scheduleResume, [name, next, row.cron, row.timezone]);
    if (rows[0]) return { schedule: toSchedule(rows[0]), changed: true };
  }
  throw new QueueError('unavailable', `schedule ${JSON.stringify(name.slice(0, 200))} kept changing while it was resumed: try again`);
}

/**
 * The idempotency key of a run-now: `schedule-run:<name>:<second>` (database clock, UTC). Its
 * prefix is not `schedule:`, so no schedule's name can make it equal a tick's key
 * (`schedule:<name>:<tick>`), whatever colons the name holds.
 */
export const runNowKey = (name: string, second: number) => `schedule-run:${scheduleKeyName(name)}:${new Date(second * 1000).toISOString().replace('.000Z', 'Z')}`;
/** The idempotency key of a tick's job: `schedule:<name>:<tick>`. */
export const scheduleTickKey = (name: string, tick: Date) => `schedule:${scheduleKeyName(name)}:${tick.toISOString()}`;
const SCHEDULE_KEY_NAME_MAX = 200;
/**
 * A schedule's name as its jobs' keys carry it (ticks, run-nows, the singleton key): itself, or
 * for a name too long for a key's 255 characters (one made by hand), `#` and its SHA-256.
 */
const scheduleKeyName = (name: string) => (name.length <= SCHEDULE_KEY_NAME_MAX ? name : `#${createHash('sha256').update(name).digest('hex')}`);

/**
 * The singleton key the jobs of a schedule that skips overlapping runs hold (ticks and Run now
 * alike): `schedule:<name>` (a name too long for 255 characters, one made by hand, by its hash).
 * A job enqueued by hand with it counts as a run of the schedule too.
 */
export const scheduleSingletonKey = (name: string) => `schedule:${scheduleKeyName(name)}`;

/**
 * What a run-now made: the job, and whether it is new (false: a run-now a moment before made
 * it, or, with `overlapping`, it is the schedule's run still unfinished: overlap 'skip').
 */
export interface ScheduleRun extends Omit<EnqueueResult, 'heldBy'> {
  schedule: string;
  overlapping?: true;
}

/**
 * scheduleRunNow — enqueue the job a schedule's ticks make, due now, leaving the schedule's
 * next tick where it is (paused or disabled schedules too: an operator may run one by hand).
 *
 * A double click, two operators pressing at once, or a request retried by a proxy must not
 * run the job twice, but a second run asked for deliberately a few seconds later must run:
 * a run-now within the same or the next second (database clock) of the last one returns that
 * one's job (`created: false`). So a repeat less than a second later never makes a second
 * job, and one two seconds later or more always does. A key per second alone would let a double
 * click across a second's boundary through; the key of the second before is looked for too.
 * The schedule's row lock serialises run-nows, so the look sees what the one before committed.
 * A schedule that runs one at a time (overlap 'skip') whose run is unfinished answers that run
 * (`created: false, overlapping: true`).
 */
export async function scheduleRunNow(pool: pg.Pool, p: { name: string; doorbell?: Doorbell | null }): Promise<ScheduleRun> {
  const made = await useTransaction(pool, async (client) => {
    const locked = (await run(client, sql.scheduleRunLock, [p.name])).rows[0];
    if (!locked) throw noSchedule(p.name);
    const second = Math.floor((locked.at as Date).getTime() / 1000);
    const key = runNowKey(p.name, second);
    const window = [runNowKey(p.name, second - 1), key];
    const singletonKey = scheduleSingletonKey(p.name);
    for (let k = 0; k < KEY_FREED_TRIES; k++) {
      const inserted = (await run(client, sql.scheduleRunNow, [p.name, key, window, singletonKey])).rows[0];
      if (inserted) {
        const ring = { jobId: String(inserted.job_id), queue: inserted.queue as string, priority: inserted.priority as number };
        // Due at once: rung at the schedule's priority once committed.
        return { id: ring.jobId, queue: ring.queue, created: true, ring };
      }
      const existing = (await run(client, sql.jobIdsByIdempotencyKey, [window])).rows;
      // The newest, should both seconds hold one (a key given by hand to POST /api/jobs).
      const hit = existing.sort((a, b) => compareJobIds(String(b.job_id), String(a.job_id)))[0];
      if (hit) return { id: String(hit.job_id), queue: hit.queue as string, created: false, ring: null };
      // Skipping overlaps, and a run of it is unfinished: that run is the answer.
      const holder = (await run(client, sql.jobIdsBySingletonKey, [[singletonKey]])).rows[0];
      if (holder) return { id: String(holder.job_id), queue: holder.queue as string, created: false, overlapping: true as const, ring: null };
      // Its job was deleted, or the run finished, in between: the key is free again.
    }
    throw new Error(`run-now of schedule ${JSON.stringify(p.name)}: its key conflicted but no job holds it`);
  });
  const { ring, ...result } = made;
  if (p.doorbell && ring) await p.doorbell.ring([ring]);
  return { schedule: p.name, ...result };
}

/**
 * scheduleTick — enqueue every due tick, each exactly once across all processes: the tick's
 * row is locked (SKIP LOCKED: another process is taking it), the job inserted (with an
 * idempotency key naming the tick), and the schedule moved to its next tick with a
 * compare-and-swap on the tick it saw — in one transaction. Ticks missed while no worker
 * ran collapse into one run. A schedule that skips overlapping runs (overlap 'skip') whose
 * run is still unfinished moves on without a job. Returns the jobs enqueued (rung here).
 */
export async function scheduleTick(pool: pg.Pool, p: { doorbell?: Doorbell | null } = {}): Promise<EnqueueResult[]> {
  const { rows: scheduled } = await run(pool, sql.scheduleDue, []);
  const out: EnqueueResult[] = [];
  // One schedule that cannot tick (its job refused by the database) must not hold up the
  // ones due after it: each goes on its own, and the failures are reported together.
  const failed: { schedule: string; err: unknown }[] = [];
  const rings: Ring[] = [];
  for (const due of scheduled) {
    try {
      const job = await useConnection(pool, async (client) => {
        await client.query('BEGIN');
        const locked = await run(client, sql.scheduleLock, [due.name, due.next_run_at]);
        if (locked.rowCount === 0) {
          await client.query('ROLLBACK');
          return null;
        }
        const d = locked.rows[0];
        const tick: Date = d.next_run_at;
        const next = nextTick(d.cron, d.timezone, d.db_now > tick ? d.db_now : tick, d.name);
        const [enqueued] = await jobEnqueue(client, [
          {
            type: d.type,
            queue: d.queue,
            payload: d.payload,
            maxAttempts: d.max_attempts,
            priority: d.priority,
            idempotencyKey: scheduleTickKey(d.name, tick),
            singletonKey: d.overlap === 'skip' ? scheduleSingletonKey(d.name) : null,
          },
        ]);
        // A run of it still unfinished holds the key: this tick is skipped, not owed. (The
        // tick's own key answering is the tick's job, as for any schedule.)
        const skipped = enqueued!.heldBy === 'singletonKey';
        if (skipped) log.debug('schedule tick skipped: a run of it is unfinished', { schedule: d.name, tick: tick.toISOString(), unfinished: enqueued!.id });
        const advanced = await run(client, sql.scheduleAdvance, [d.name, tick, next, enqueued!.id, skipped]);
        if (advanced.rowCount !== 1) {
          await client.query('ROLLBACK');
          return null;
        }
        await client.query('COMMIT');
        if (enqueued!.created) rings.push({ jobId: enqueued!.id, queue: enqueued!.queue, priority: d.priority });
        return skipped ? null : enqueued!;
      });
      if (job) out.push(job);
    } catch (err) {
      failed.push({ schedule: due.name, err });
      // Said where operators look, not only in the workers' log. Best effort: when the
      // database itself is what failed, this fails too, and the log still has it.
      const said = storableText(((err as Error)?.message || String(err)).slice(0, 2_000));
      await run(pool, sql.scheduleTickFailed, [due.name, due.next_run_at, said]).catch(() => {});
    }
  }
  if (p.doorbell && rings.length) await p.doorbell.ring(rings);
  if (failed.length) {
    throw new AggregateError(
      failed.map((f) => f.err),
      `${failed.length} schedule(s) could not tick: ${failed.map((f) => `${f.schedule} (${(f.err as Error)?.message ?? f.err})`).join('; ')}`,
    );
  }
  return out;
}

/** The Postgres-only doorbell: wakes workers LISTENing on leasehold_wakeup. */
export async function wakeupNotify(db: Executor, queues: readonly string[]) {
  await run(db, sql.wakeupNotify, [queues]);
}

// ------------------------------------------------------------------ job types

/** A job type as a worker registers it (the built-in ones are not registered: lib/job-types.ts). */
export interface JobTypeRegistration {
  name: string;
  description: string | null;
  /** JSON Schema of the payload; null: any JSON object. */
  payloadSchema: Record<string, unknown> | null;
  timeoutMs: number | null;
  /** Attempts for a job of this type enqueued without maxAttempts; null: DEFAULT_MAX_ATTEMPTS. */
  maxAttempts: number | null;
}

export interface RegisteredJobType extends JobTypeRegistration {
  registeredAt: Date;
  seenAt: Date;
}

/** jobTypesRegister — a starting worker's job types (see statements.ts). */
export async function jobTypesRegister(db: Executor, types: readonly JobTypeRegistration[]): Promise<void> {
  if (types.length) await run(db, sql.jobTypesRegister, [JSON.stringify(types)]);
}

export async function jobTypesRegistered(db: Executor): Promise<RegisteredJobType[]> {
  return (await run(db, sql.jobTypesList, [])).rows.map((r) => ({
    name: r.name,
    description: r.description,
    payloadSchema: r.payload_schema,
    timeoutMs: r.timeout_ms,
    maxAttempts: r.max_attempts,
    registeredAt: r.registered_at,
    seenAt: r.seen_at,
  }));
}

// ------------------------------------------------------------------ worker rows

export async function workerRegister(
  db: Executor,
  w: { workerId: string; host: string; pid: number; queues: readonly string[]; concurrency: number; types?: readonly string[] | null },
) {
  await run(db, sql.workerRegister, [w.workerId, w.host, w.pid, w.queues, w.concurrency, w.types ?? null]);
}

/**
 * queueWorkersForType — the live workers (reported within `aliveWithinMs`) serving a queue,
 * and how many of them have a handler for a type: why a waiting job waits; the live workers
 * anywhere and how long ago the recover sweep ran (null: never recorded): who moves an
 * expired lease on.
 */
export async function queueWorkersForType(db: Executor, p: { queue: string; type: string; aliveWithinMs: number }) {
  const { rows } = await run(db, sql.queueWorkersForType, [p.queue, p.type, Math.round(p.aliveWithinMs)]);
  const r = rows[0];
  return {
    onQueue: r.on_queue as number,
    withHandler: r.with_handler as number,
    anywhere: r.anywhere as number,
    sweptAgoMs: r.swept_ago_ms === null ? null : Math.max(0, Math.round(Number(r.swept_ago_ms))),
    queuePaused: r.paused as boolean,
    queueControlled: r.controlled as boolean,
  };
}

/** A due waiting job's place in its queue's line (jobsAhead). */
export interface JobsAhead {
  /** Due jobs of a higher priority (a lower number): claims take them first. */
  higher: number;
  /** Due jobs of its own priority due before it (or at the same moment, enqueued first). */
  sameLevel: number;
  /** The count stopped at AHEAD_CAP: there are more ahead. */
  capped: boolean;
}

/**
 * jobsAhead — for a due waiting job, the due jobs of its queue that claims take first: of a
 * higher priority, then of its own level due before it; of the types the queue's live
 * workers have handlers for (any, when one of them takes any type or none is live), up to
 * AHEAD_CAP in all.
 */
export async function jobsAhead(db: Executor, job: Pick<Job, 'id' | 'queue'>, p: { aliveWithinMs: number }): Promise<JobsAhead> {
  const { rows: [live] } = await run(db, sql.queueHandledTypes, [job.queue, Math.round(p.aliveWithinMs)]);
  const { rows } = live?.types
    ? await run(db, sql.jobsAheadOfTypes, [job.id, AHEAD_CAP, live.types])
    : await run(db, sql.jobsAhead, [job.id, AHEAD_CAP]);
  return { higher: rows[0].higher as number, sameLevel: rows[0].same_level as number, capped: rows[0].capped as boolean };
}

/**
 * The process is alive (its counters so far); answers whether an operator has quieted it,
 * and the request's token, which the process reports as its `quiet` once it claims nothing.
 */
export async function workerHeartbeat(db: Executor, workerId: string, metrics: unknown = {}): Promise<{ quiet: boolean; quietToken: string | null }> {
  const { rows } = await run(db, sql.workerHeartbeat, [workerId, JSON.stringify(metrics)]);
  return { quiet: rows[0]?.quiet === true, quietToken: rows[0]?.quiet_token ?? null };
}

/**
 * workerSetQuiet — quiet (or resume) running worker processes: a quiet one claims no new job
 * and finishes those in hand; it reads the request with its next heartbeat (a third of a
 * lease by default). Answers the ids it changed (one stopped, unknown, or already so is not).
 */
export async function workerSetQuiet(db: Executor, p: { workerIds: readonly string[]; quiet: boolean; by: string }): Promise<string[]> {
  const { rows } = await run(db, sql.workerQuiet, [p.workerIds, p.quiet, p.by]);
  return rows.map((r) => r.worker_id as string);
}

/**
 * One worker quieted or resumed (the console's and the API's): whether it changed, and the
 * quiet request's token (a process quieting itself adopts it at once: worker/process.ts);
 * not_found for no such worker, state_forbids for one that has stopped (it claims nothing anyway).
 */
export async function workerQuietOne(
  db: Executor,
  p: { workerId: string; quiet: boolean; by: string },
): Promise<{ changed: boolean; quietToken: string | null }> {
  const changed = (await workerSetQuiet(db, { ...p, workerIds: [p.workerId] })).length > 0;
  if (changed && !p.quiet) return { changed, quietToken: null };
  const { rows } = await run(db, sql.workerQuietState, [p.workerId]);
  if (changed) return { changed, quietToken: rows[0]?.quiet_token ?? null };
  if (!rows[0]) throw new QueueError('not_found', `no worker ${JSON.stringify(p.workerId.slice(0, 120))}`);
  if (rows[0].stopped) throw new QueueError('state_forbids', 'the worker has stopped: it claims nothing');
  if (p.quiet && !rows[0].quiet && !rows[0].reads_quiet) {
    throw new QueueError('state_forbids', 'the worker does not read quiet requests: it runs an earlier version, or has not reported since it started (its first heartbeat comes within a third of a lease)');
  }
  return { changed: false, quietToken: rows[0].quiet_token ?? null };
}

export async function workerStop(db: Executor, workerId: string, metrics: unknown = {}) {
  await run(db, sql.workerStop, [workerId, JSON.stringify(metrics)]);
}

/**
 * A worker process on `host` ended without stopping (see statements.workerDied): its row is
 * marked, and when its worker id is known the leases it held end now. Returns the worker id
 * marked (null: none) and how many leases ended.
 */
export async function workerDied(
  db: Executor,
  p: { host: string; pid: number; exit: string; workerId?: string | null },
): Promise<{ workerId: string | null; leasesEnded: number }> {
  const { rows } = await run(db, sql.workerDied, [p.host, p.pid, p.exit, p.workerId ?? null]);
  return { workerId: rows[0]?.worker_id ?? null, leasesEnded: rows[0]?.leases_ended ?? 0 };
}
