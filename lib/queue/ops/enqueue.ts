import type pg from 'pg';
import type { Executor } from '../../db/client';
import { failpoint, failpointsEnabled, isSkipped } from '../../failpoints';
import { DEFAULT_PRIORITY, type EnqueueKey } from '../job';
import type { Doorbell, Ring } from '../signal';
import * as sql from '../statements';
import { isDeadlock, KEY_FREED_TRIES, retriedOnLostRace, run } from './internal';

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
export { DEFAULT_MAX_ATTEMPTS } from '../job';

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

/** jobEnqueue; `tries`: inserts tried before, their key's job deleted in between (see below). */
async function enqueue(db: Executor, inputs: readonly EnqueueInput[], doorbell: Doorbell | null | undefined, tries: number): Promise<EnqueueResult[]> {
  if (inputs.length === 0) return [];
  if (inputs.length === 1) return enqueueOne(db, inputs[0]!, doorbell, tries);
  // A deadlock's victim is tried again (see retriedOnLostRace): the insert writes its keys in
  // one order, but a producer's open transaction holding one of them may want another the
  // batch holds, and two batches pairing the two kinds of keys differently cross each other.
  // A single row waits for a key without holding another, so it cannot deadlock.
  const { rows } = await retriedOnLostRace(db, isDeadlock, () => run(db, sql.jobEnqueue, [
    inputs.map((i) => i.queue ?? DEFAULT_QUEUE),
    inputs.map((i) => i.type),
    inputs.map((i) => JSON.stringify(i.payload ?? {})),
    inputs.map((i) => i.maxAttempts ?? null),
    inputs.map((i) => i.runAt ?? null),
    inputs.map((i) => i.idempotencyKey ?? null),
    inputs.map((i) => i.priority ?? DEFAULT_PRIORITY),
    inputs.map((i) => i.singletonKey ?? null),
  ]));
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
