/**
 * What /api/metrics reports, read from PostgreSQL (and Redis) at most once per scrape:
 *  - job counts per queue and status, read as the console reads them (computeConsoleStats:
 *    exact where an index holds the status, completed rows estimated from the table's
 *    statistics past COUNT_CAP, never a scan of the table), cached per process for
 *    `statsTtlMs` however often Prometheus scrapes;
 *  - the counters and histograms every worker process writes into its `workers.metrics`
 *    row with each heartbeat, summed in SQL over all incarnations (so they survive
 *    restarts; a SIGKILLed process's last few seconds since its last heartbeat are lost);
 *  - the Redis signal backlog per queue (LLEN through the doorbell).
 * Concurrent callers share one in-flight read (single flight), so the many collectors of
 * one scrape cost one query each.
 */
import { performance } from 'node:perf_hooks';
import type { Executor } from '../db/client';
import { DURATION_BUCKETS_MS } from '../queue/histogram';
import { computeConsoleStats } from '../queue/console-stats';
import { readTypeTotals, type TypeTotals } from '../queue/type-metrics';
import { summedSql, WORKER_COUNTERS, WORKER_METRICS, type WorkerCounter } from '../queue/worker-totals';
import type { Stats } from '../queue/read';
import type { Doorbell } from '../queue/signal';
import { redisSettled } from '../redis-settled';

export const WORKER_HISTOGRAMS = ['queueWaitMs', 'runTimeMs'] as const;
export type WorkerHistogram = (typeof WORKER_HISTOGRAMS)[number];

export interface SummedHistogram {
  /** Per-bucket counts (not cumulative), one per DURATION_BUCKETS_MS bound plus one above all. */
  counts: number[];
  sumMs: number;
  count: number;
}

export interface WorkerTotals {
  counters: Record<WorkerCounter, number>;
  histograms: Record<WorkerHistogram, SummedHistogram>;
  /** Summed over live worker processes only (not stopped, heartbeat within a minute). */
  inFlight: number;
  running: number;
}

const LIVE = `stopped_at IS NULL AND heartbeat_at > now() - interval '1 minute'`;

const TOTALS_SQL = `
  SELECT ${WORKER_COUNTERS.map((k) => `${summedSql(k)} AS "${k}"`).join(',\n         ')},
         ${WORKER_HISTOGRAMS.map((h) => `${summedSql(`${h},sum`)} AS "${h}_sum", ${summedSql(`${h},count`)} AS "${h}_count"`).join(',\n         ')},
         ${summedSql('inFlight', LIVE)} AS in_flight,
         ${summedSql('running', LIVE)} AS running
    FROM ${WORKER_METRICS} w`;

const BUCKETS_SQL = `
  SELECT h.name, b.ord::int AS ord, sum(b.n::numeric) AS n
    FROM ${WORKER_METRICS} w
   CROSS JOIN LATERAL (VALUES ${WORKER_HISTOGRAMS.map((h) => `('${h}', w.metrics #> '{${h},counts}')`).join(', ')}) AS h(name, counts)
   CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(h.counts) = 'array' THEN h.counts ELSE '[]'::jsonb END)
         WITH ORDINALITY AS b(n, ord)
   WHERE jsonb_typeof(b.n) = 'number'
   GROUP BY h.name, b.ord`;

export async function readWorkerTotals(db: Executor): Promise<WorkerTotals> {
  const [totals, buckets] = await Promise.all([db.query(TOTALS_SQL), db.query(BUCKETS_SQL)]);
  const t = totals.rows[0];
  const counters = Object.fromEntries(WORKER_COUNTERS.map((k) => [k, Number(t[k])])) as Record<WorkerCounter, number>;
  const histograms = Object.fromEntries(
    WORKER_HISTOGRAMS.map((h) => [
      h,
      { counts: new Array<number>(DURATION_BUCKETS_MS.length + 1).fill(0), sumMs: Number(t[`${h}_sum`]), count: Number(t[`${h}_count`]) },
    ]),
  ) as Record<WorkerHistogram, SummedHistogram>;
  for (const r of buckets.rows) {
    const h = histograms[r.name as WorkerHistogram];
    // A row written with a different bucket layout (an older version) cannot be placed
    // in these buckets: its extra entries count as "above every bound".
    const k = Math.min(r.ord - 1, DURATION_BUCKETS_MS.length);
    if (h) h.counts[k]! += Number(r.n);
  }
  return { counters, histograms, inFlight: Number(t.in_flight), running: Number(t.running) };
}

/**
 * fn's result, reused for `ttlMs`; concurrent callers share one in-flight call; errors are not
 * cached. Timed on the monotonic clock: on the wall clock, a step back of an hour (NTP, an
 * operator's `date -s`) served the same numbers for an hour.
 */
export function cached<T>(fn: () => Promise<T>, ttlMs: number, now: () => number = () => performance.now()) {
  let value: { v: T; at: number } | null = null;
  let inflight: Promise<T> | null = null;
  const get = (): Promise<T> => {
    if (value && now() - value.at < ttlMs) return Promise.resolve(value.v);
    inflight ??= fn()
      .then((v) => {
        value = { v, at: now() };
        return v;
      })
      .finally(() => {
        inflight = null;
      });
    return inflight;
  };
  return Object.assign(get, {
    /** How long ago the cached value was read (ms), or null. */
    ageMs: () => (value ? Math.max(0, now() - value.at) : null),
  });
}

/** How long job counts are reused between scrapes (the count reads the whole table). */
export const STATS_TTL_MS_DEFAULT = 5_000;
/** Worker totals are cheap, but one scrape asks for them from a dozen collectors. */
export const TOTALS_TTL_MS_DEFAULT = 1_000;
/** The per-type totals: see createMetricsSource. */
export const TYPES_TTL_MS_DEFAULT = 15_000;

export interface MetricsSource {
  stats: (() => Promise<Stats>) & { ageMs(): number | null };
  workerTotals: () => Promise<WorkerTotals>;
  /** Outcomes and run times per queue and job type (lib/queue/type-metrics.ts). */
  typeTotals: () => Promise<TypeTotals[]>;
  /** Ids waiting in the Redis signal per queue (queues from the job counts); empty without Redis. */
  backlog: () => Promise<Map<string, number>>;
  /** Whether the doorbell rings through Redis (after its first connection settled). */
  usingRedis: () => Promise<boolean>;
  /** Job ids this process's doorbell rang by NOTIFY because Redis did not take them. */
  notifyFallbacks?: () => number;
}

export function createMetricsSource(o: {
  db: Executor;
  doorbell: Doorbell;
  /** A worker with no heartbeat for this long is not counted alive (the lease, as the console). */
  leaseMs: number;
  statsTtlMs?: number;
  totalsTtlMs?: number;
  typesTtlMs?: number;
}): MetricsSource {
  // Not getStats (the CLI's exact count): grouping a million rows by queue and status, with
  // the oldest due job's age, took 432-541 ms a refresh in every web process (this: 67-174 ms).
  const stats = cached(async (): Promise<Stats> => {
    const s = await computeConsoleStats(o.db, { leaseMs: o.leaseMs });
    return {
      counts: s.counts,
      queues: s.queues.map((q) => ({
        queue: q.queue,
        counts: q.counts,
        kinds: q.kinds,
        oldestDueAgeMs: q.oldestDueAgeMs,
        paused: !!q.controls?.paused,
        workersAlive: q.workersAlive,
      })),
      oldestQueuedAgeMs: s.oldestQueuedAgeMs,
      runningExpired: s.runningExpired,
      workersAlive: s.workersAlive,
      schedulesFailing: s.schedulesFailing,
      schedulesSkipping: s.schedulesSkipping,
      sweptAgoMs: s.sweptAgoMs,
      database: s.database,
      dbNow: s.dbNow,
    };
  }, o.statsTtlMs ?? STATS_TTL_MS_DEFAULT);
  const totalsTtl = o.totalsTtlMs ?? TOTALS_TTL_MS_DEFAULT;
  const workerTotals = cached(() => readWorkerTotals(o.db), totalsTtl);
  // Their read walks every worker row's list of types (1.8 s at 10,000 rows of 20 types):
  // shared for longer than a scrape interval's usual 15 s.
  const typeTotals = cached(() => readTypeTotals(o.db), o.typesTtlMs ?? TYPES_TTL_MS_DEFAULT);
  // One collector asks for it per scrape: LLEN per known queue, not cached.
  const backlog = async () => {
    const out = new Map<string, number>();
    await redisSettled(o.doorbell);
    if (!o.doorbell.usingRedis) return out;
    const queues = (await stats()).queues.map((q) => q.queue);
    const lengths = await Promise.all(queues.map((q) => o.doorbell.backlog(q)));
    queues.forEach((q, k) => {
      const n = lengths[k];
      if (n !== null && n !== undefined) out.set(q, n);
    });
    return out;
  };
  const usingRedis = async () => {
    await redisSettled(o.doorbell);
    return o.doorbell.usingRedis;
  };
  return { stats, workerTotals, typeTotals, backlog, usingRedis, notifyFallbacks: () => o.doorbell.notifyFallbacks ?? 0 };
}
