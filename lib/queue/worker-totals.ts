/**
 * The workers' counters summed over every worker row (each process writes its own with its
 * heartbeat; every incarnation counts, so they survive restarts): what the console's charts
 * and the stats history are made of. Incarnations gone for a week are folded into one
 * archive row by the recover sweep (foldOldWorkers), which every sum reads beside them
 * (WORKER_METRICS), so the workers table stays small and no total goes down.
 */
import type pg from 'pg';
import type { Executor } from '../db/client';

/**
 * Every row whose counters count: the workers' and the archive's (as a stopped row, so it is
 * never counted alive). Use in place of `workers` wherever counters are summed.
 */
export const WORKER_METRICS = `(SELECT metrics, stopped_at, heartbeat_at FROM workers
   UNION ALL SELECT metrics, folded_at, folded_at FROM worker_totals_archive)`;

/** Worker rows silent (stopped or not) for longer than this are folded into the archive. */
export const WORKER_ROWS_KEEP_MS = 7 * 86_400_000;
/** Rows folded per sweep at most: a backlog of years is folded over a few sweeps, never in one long transaction. */
export const FOLD_BATCH = 500;

/** The counter keys a worker's metrics row carries (worker/runner.ts RunnerStats). */
export const WORKER_COUNTERS = [
  'claimed',
  'completed',
  'failed',
  'retried',
  'cancelled',
  'snoozed',
  'leaseLost',
  'refusedWrites',
  'recovered',
  'resignalled',
  'pruned',
  'notifyFallbacks',
] as const;
export type WorkerCounter = (typeof WORKER_COUNTERS)[number];

/** The counters the console's charts and stats history show. */
export const TOTAL_COUNTERS = ['claimed', 'completed', 'failed', 'retried', 'cancelled', 'leaseLost', 'recovered'] as const satisfies readonly WorkerCounter[];
export type WorkerTotals = Record<(typeof TOTAL_COUNTERS)[number], number>;

/**
 * SQL: the number at `path` (`claimed`, `runTimeMs,sum`) summed over the rows `w` of
 * WORKER_METRICS. A missing or malformed value (a row written by hand, or by a version
 * with other keys) adds nothing, where a cast would fail the whole read, and the overview
 * with it. Every sum of the workers' counters is written with this; `filter` limits the rows.
 */
export const summedSql = (path: string, filter?: string) =>
  `coalesce(sum(CASE WHEN jsonb_typeof(w.metrics #> '{${path}}') = 'number' THEN (w.metrics #>> '{${path}}')::numeric END)${filter ? ` FILTER (WHERE ${filter})` : ''}, 0)`;

/** The TOTAL_COUNTERS, summed: as columns, or (`json`) as one JSON object. */
export const totalsSql = (as: 'columns' | 'json') =>
  as === 'columns'
    ? TOTAL_COUNTERS.map((k) => `${summedSql(k)} AS "${k}"`).join(', ')
    : `json_build_object(${TOTAL_COUNTERS.map((k) => `'${k}', ${summedSql(k)}`).join(', ')})`;

/** A read's totals as numbers (a missing key is 0). */
export const totalsOf = (r: Record<string, unknown>): WorkerTotals =>
  Object.fromEntries(TOTAL_COUNTERS.map((k) => [k, r[k] === null || r[k] === undefined ? 0 : Number(r[k])])) as WorkerTotals;

/** Only the workers' counters (the throughput sampler reads these between full refreshes). */
export async function readWorkerTotals(db: Executor): Promise<{ totals: WorkerTotals; dbNow: Date }> {
  const { rows } = await db.query(`SELECT ${totalsSql('columns')}, now() AS db_now FROM ${WORKER_METRICS} w`);
  return { totals: totalsOf(rows[0]), dbNow: rows[0].db_now };
}

/** Keys of a worker's report that say what it is doing now, not what it did: not summed. */
const GAUGES = new Set(['inFlight', 'running', 'rssBytes', 'quiet']);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A histogram snapshot ({counts, sum, count}) added into another, bucket by bucket. */
function addHistogram(into: Json, h: Json) {
  const counts = Array.isArray(into.counts) ? (into.counts as number[]) : [];
  if (Array.isArray(h.counts)) h.counts.forEach((n, k) => (counts[k] = (counts[k] ?? 0) + (isNumber(n) ? n : 0)));
  into.counts = counts;
  into.sum = (isNumber(into.sum) ? into.sum : 0) + (isNumber(h.sum) ? h.sum : 0);
  into.count = (isNumber(into.count) ? into.count : 0) + (isNumber(h.count) ? h.count : 0);
}

/**
 * One worker report added into a running total, as the sums read them: every counter (a
 * number), every histogram (bucket by bucket) and every job type's (byType, by queue and
 * type); what describes the process now (jobs in hand, memory, quiet) is left out.
 */
export function addReport(into: Json, report: unknown): Json {
  if (!isObject(report)) return into;
  for (const [k, v] of Object.entries(report)) {
    if (GAUGES.has(k)) continue;
    if (k === 'byType') {
      if (!Array.isArray(v)) continue;
      const kinds = Array.isArray(into.byType) ? (into.byType as Json[]) : [];
      for (const e of v) {
        if (!isObject(e) || typeof e.queue !== 'string' || typeof e.type !== 'string') continue;
        let kind = kinds.find((x) => x.queue === e.queue && x.type === e.type);
        if (!kind) kinds.push((kind = { queue: e.queue, type: e.type }));
        addReport(kind, { ...e, queue: undefined, type: undefined });
      }
      into.byType = kinds;
    } else if (isNumber(v)) {
      into[k] = (isNumber(into[k]) ? into[k] : 0) + v;
    } else if (isObject(v) && 'counts' in v) {
      const h = isObject(into[k]) ? (into[k] as Json) : {};
      addHistogram(h, v);
      into[k] = h;
    }
  }
  return into;
}

/**
 * foldOldWorkers — the rows of incarnations silent for WORKER_ROWS_KEEP_MS (stopped, died, or
 * gone without a word) added into the archive row and deleted, FOLD_BATCH at a time, in one
 * transaction: a reader sees them either in the workers table or in the archive, never both
 * or neither. Run by the recover sweep; answers how many it folded.
 */
export async function foldOldWorkers(pool: pg.Pool, keepMs = WORKER_ROWS_KEEP_MS): Promise<number> {
  const client = await pool.connect();
  let broken: unknown;
  try {
    await client.query('BEGIN');
    const { rows } = await client.query(
      `SELECT worker_id, metrics FROM workers
        WHERE heartbeat_at < now() - $1::float8 * interval '1 millisecond'
        ORDER BY heartbeat_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [keepMs, FOLD_BATCH],
    );
    if (!rows.length) {
      await client.query('COMMIT');
      return 0;
    }
    await client.query(`INSERT INTO worker_totals_archive (id) VALUES (true) ON CONFLICT (id) DO NOTHING`);
    const archive = (await client.query(`SELECT metrics FROM worker_totals_archive WHERE id FOR UPDATE`)).rows[0];
    const total = isObject(archive?.metrics) ? (archive.metrics as Json) : {};
    for (const r of rows) addReport(total, r.metrics);
    await client.query(`UPDATE worker_totals_archive SET metrics = $1::jsonb, workers = workers + $2, folded_at = now() WHERE id`, [JSON.stringify(total), rows.length]);
    await client.query(`DELETE FROM workers WHERE worker_id = ANY($1::text[])`, [rows.map((r) => r.worker_id)]);
    await client.query('COMMIT');
    return rows.length;
  } catch (err) {
    broken = err;
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release(broken instanceof Error ? broken : undefined);
  }
}
