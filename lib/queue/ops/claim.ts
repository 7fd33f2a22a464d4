import type pg from 'pg';
import { type Executor, useTransaction } from '../../db/client';
import { type ClaimedJob, toClaimedJob } from '../job';
import * as sql from '../statements';
import { intArray, run } from './internal';

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
