/**
 * What the web process's route handlers share: configuration, two pools (reads carry a
 * short statement_timeout so a heavy console query can never pile up; writes a longer one,
 * below the client's own limit) and the doorbell producers ring after COMMIT. Created on
 * first use, once per process.
 */
import type pg from 'pg';
import { loadConfig, type Config, redisDisabled, DEFAULT_REDIS_URL } from '../config';
import { sharedPool } from '../db/client';
import { FsResultStore, type ResultStore, resultsDir } from '../results';
import { QueueError } from '../queue/errors';
import { type Doorbell, PgDoorbell, RedisDoorbell } from '../queue/signal';
import { StatsCache } from '../queue/stats-cache';

export interface ServerContext {
  cfg: Config;
  pool: pg.Pool;
  readPool: pg.Pool;
  doorbell: Doorbell;
  /** The overview's numbers, computed once for all viewers (lib/queue/stats-cache.ts). */
  stats: StatsCache;
  /** Job results (read by GET /api/jobs/:id/result; deleted with their jobs). */
  results: ResultStore;
}

const g = globalThis as unknown as { __leaseholdServer?: ServerContext };

export const READ_STATEMENT_TIMEOUT_MS = 5_000;
/**
 * A write the server has not finished in this long is cancelled by the server itself (and
 * rolled back), before the client's own limit below gives up on it: a client that gave up
 * first would answer an error for a write that then commits (a producer retrying an
 * enqueue would make it twice). What it waits for, say a lock an operator's long
 * transaction holds, counts.
 */
export const WRITE_STATEMENT_TIMEOUT_MS = 20_000;
const WRITE_QUERY_TIMEOUT_MS = 30_000;

export function serverContext(): ServerContext {
  if (g.__leaseholdServer) return g.__leaseholdServer;
  const cfg = loadConfig();
  if (!cfg.databaseUrl) {
    throw new QueueError('unavailable', 'DATABASE_URL is not set: start the console with `npm start` or `npm run web`');
  }
  // JIT off: the console's statements are short, but over a big table their estimated cost
  // passes jit_above_cost, and compiling them took 300 ms of a 360 ms stats refresh at 1M rows.
  const settings = { jit: 'off' };
  // Client-side timeouts too: a connection gone quiet (a NAT forgetting the flow) would hang
  // a request for ever and keep its connection from the pool; the server's statement_timeout
  // cannot see it. Writes are batches of at most OP_BATCH ids; none takes seconds.
  const pool = sharedPool('web', cfg.databaseUrl, {
    max: 10,
    statementTimeoutMs: WRITE_STATEMENT_TIMEOUT_MS,
    queryTimeoutMs: WRITE_QUERY_TIMEOUT_MS,
    settings: { ...settings, idle_in_transaction_session_timeout: String(WRITE_QUERY_TIMEOUT_MS) },
  });
  const readPool = sharedPool('web-read', cfg.databaseUrl, {
    max: 5,
    statementTimeoutMs: READ_STATEMENT_TIMEOUT_MS,
    queryTimeoutMs: READ_STATEMENT_TIMEOUT_MS + 5_000,
    settings,
  });
  const redisUrl = redisDisabled(cfg.redisUrl) ? null : (cfg.redisUrl ?? DEFAULT_REDIS_URL);
  const doorbell = redisUrl ? new RedisDoorbell(redisUrl, cfg.redisPrefix, pool) : new PgDoorbell(pool);
  const stats = new StatsCache(readPool, { doorbell, leaseMs: cfg.leaseMs, recoverMs: cfg.recoverMs });
  g.__leaseholdServer = { cfg, pool, readPool, doorbell, stats, results: new FsResultStore(resultsDir(cfg)) };
  return g.__leaseholdServer;
}

/**
 * Marks the overview's snapshot stale after an operator's action, so the next read of the
 * stats computes them again. A process that never built its context has no snapshot to
 * mark, and is not made to open pools for it.
 */
export function invalidateStats() {
  g.__leaseholdServer?.stats.invalidate();
}

/** Closes the pools and the doorbell (tests; a server simply exits). */
export async function closeServerContext() {
  const ctx = g.__leaseholdServer;
  if (!ctx) return;
  g.__leaseholdServer = undefined;
  ctx.stats.stop();
  await ctx.doorbell.close?.(); // not instanceof: each route bundle has its own copy of the class
  await Promise.allSettled([ctx.pool.end(), ctx.readPool.end()]);
  const pools = (globalThis as unknown as { __leaseholdPools?: Map<string, pg.Pool> }).__leaseholdPools;
  pools?.clear();
}

/**
 * At the console server's start (instrumentation.ts): the overview's first snapshot is
 * computed in the background, so the first viewers are answered from it instead of each
 * waiting for it (150-200 ms at a million rows while workers drain, more on a slow
 * database). After that, as always, nothing is computed while nobody looks. A database that
 * is not there yet is the first viewer's error to see, not the start's.
 */
export function warmUpStats() {
  try {
    serverContext()
      .stats.get()
      .catch(() => {});
  } catch {
    // DATABASE_URL unset: every request says so.
  }
}
