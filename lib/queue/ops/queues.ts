import type { Executor } from '../../db/client';
import { QueueError } from '../errors';
import { AHEAD_CAP, type Job } from '../job';
import * as sql from '../statements';
import { run } from './internal';

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

/** What an operator sets on a queue (not its running count or rate tokens): to tell a change from a no-op. */
const controlsKey = (c: QueueControl | null | undefined) => (c ? JSON.stringify([c.paused, c.concurrencyLimit, c.rateLimit, c.ratePeriodMs]) : 'none');

/**
 * queueSetControls for an operator (the API, the CLI): also whether anything changed, for the
 * audit log (a resume of a queue that was not paused, a limit cleared that was not set, is
 * recorded as skipped, not as a change).
 */
export async function queueChangeControls(
  db: Executor,
  p: Parameters<typeof queueSetControls>[1],
): Promise<{ controls: QueueControl | null; changed: boolean }> {
  const [previous] = await queueControls(db, [p.name]);
  const controls = await queueSetControls(db, p);
  return { controls, changed: controlsKey(previous) !== controlsKey(controls) };
}

/** queueChangeControls' answer as the audit log counts it: a change, or a no-op (skipped). */
export const controlsChangeCounted = ({ changed }: { changed: boolean }) => ({ changed: changed ? 1 : 0, skipped: changed ? 0 : 1 });

/** Whether a job waits in the queue, a live worker serves it or a schedule enqueues into it (sql.queueInUse). */
export async function queueInUse(db: Executor, p: { queue: string; aliveWithinMs: number }): Promise<boolean> {
  const { rows } = await run(db, sql.queueInUse, [p.queue, Math.round(p.aliveWithinMs)]);
  return rows[0].in_use as boolean;
}

/** The Postgres-only doorbell: wakes workers LISTENing on leasehold_wakeup. */
export async function wakeupNotify(db: Executor, queues: readonly string[]) {
  await run(db, sql.wakeupNotify, [queues]);
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
