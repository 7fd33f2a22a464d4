import type pg from 'pg';
import { answeredByServer, type Executor, useConnection } from '../../db/client';
import { log } from '../../log';
import type { ResultStore } from '../../results';
import { recordStatsSample } from '../history';
import type { Doorbell, Ring } from '../signal';
import * as sql from '../statements';
import type { JobStatus } from '../status';
import { foldOldWorkers } from '../worker-totals';
import { run, uniq } from './internal';
import { dropDeletedResultsLater, pruneFor, resultsPending, RESULTS_PENDING_MAX, type PruneReport, type Retention, retentionPrunes } from './prune';

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

/** The server takes client_connection_check_interval (see recoverSweep); false once refused. */
let connectionCheck = true;

/** The sample's refusal (a role without the right) is logged once per process. */
let sampleRefusalSaid = false;

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
    // Not while the results of earlier prunes still wait to be deleted (RESULTS_PENDING_MAX).
    const pruned = retentionPrunes(p.retention) && resultsPending(p.results) < RESULTS_PENDING_MAX ? await pruneFor(client, { retention: p.retention }) : null;
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
  void dropDeletedResultsLater(p.results, out.pruned?.results ?? []);
  return out;
}
