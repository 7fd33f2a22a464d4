/**
 * The workers' counters over days: one sample a minute in `stats_samples`, kept a week.
 *
 * The console's live charts come from samples each console process takes while it runs (an
 * hour at most, lost when it restarts): "what happened overnight" needs a record that does not
 * depend on a console being open. The recover sweep writes it (recordStatsSample, under the
 * sweep's lock: one writer a minute however many workers run), from the same sums the console
 * reads; the overview reads a range of it back (readHistory) as rates per bucket and the Job
 * types table over the range.
 */
import type { Executor } from '../db/client';
import { readLeasesLost } from './failure-series';
import { readWorkerTotals, type WorkerTotals } from './worker-totals';
import { readLostLeases, readTypeTotals, type TypeTotals, typeWindow, type TypeWindowRow, withLostLeases } from './type-metrics';

/** One sample at most this often (a little under the minute: a sweep every 5 s lands within one). */
export const HISTORY_SAMPLE_MS = 55_000;
/** Samples older than this are deleted as new ones are written. */
export const HISTORY_KEEP_MS = 7 * 86_400_000;

/** The ranges the overview offers, and the width of each chart bucket. */
export const HISTORY_RANGES = {
  '24h': { rangeMs: 86_400_000, bucketMs: 5 * 60_000 },
  '7d': { rangeMs: 7 * 86_400_000, bucketMs: 60 * 60_000 },
} as const;
export type HistoryRange = keyof typeof HISTORY_RANGES;

/**
 * Writes a sample when the last one is a minute old (or there is none), and deletes those
 * past the week. Run under the recover sweep's lock; true when it wrote one.
 */
export async function recordStatsSample(db: Executor): Promise<boolean> {
  const { rows } = await db.query(`SELECT coalesce((SELECT max(at) FROM stats_samples) <= now() - interval '${HISTORY_SAMPLE_MS} milliseconds', true) AS due`);
  if (rows[0]?.due !== true) return false;
  const { totals } = await readWorkerTotals(db);
  const byType = await readTypeTotals(db);
  await db.query(`INSERT INTO stats_samples (at, counters, by_type) VALUES (now(), $1::jsonb, $2::jsonb) ON CONFLICT (at) DO NOTHING`, [
    JSON.stringify(totals),
    JSON.stringify(byType),
  ]);
  await db.query(`DELETE FROM stats_samples WHERE at < now() - interval '${HISTORY_KEEP_MS} milliseconds'`);
  return true;
}

/**
 * Rates per bucket over a range (jobs per second): from the first sample of each bucket to the
 * next bucket's first, or to the bucket's own last sample for the latest bucket and for one a
 * hole in the record follows (see HISTORY_HOLE_BUCKETS).
 */
export interface HistoryPoint {
  /** Bucket start, ms since the epoch (database clock). */
  t: number;
  claimed: number;
  completed: number;
  /** Jobs the workers moved to the dead letter (their own count: a worker killed mid-burst takes its last minute with it). */
  failed: number;
  retried: number;
  /**
   * Attempts whose lease was lost, counted from the attempt history as the live chart counts
   * them (readLeasesLost): the workers' own count loses what a killed worker had not reported.
   */
  recovered: number;
}

export interface History {
  range: HistoryRange;
  rangeMs: number;
  bucketMs: number;
  /** The first and last samples the range holds (null: none yet). */
  since: Date | null;
  until: Date | null;
  points: HistoryPoint[];
  /** Per queue and job type, between the first sample and the last. */
  types: TypeWindowRow[];
}

const RATE_KEYS = ['claimed', 'completed', 'failed', 'retried'] as const;

/**
 * Samples further apart than this many buckets have a hole between them (no sweep ran: every
 * worker down, or the database unreachable): the bucket before it is not given the average
 * over the hole (a busy hour before a night without workers read as a trickle), but its own
 * samples' rate. Below it, a sparse record (a sweep every few minutes) still reads as rates.
 */
export const HISTORY_HOLE_BUCKETS = 3;

/**
 * A range of the record: two samples per bucket (its first and its last), the rate from each
 * bucket's first to the next one's (to its own last for the latest bucket, and before a hole),
 * and the per-type totals of the range's two ends only (a week of per-type rows is never read
 * whole).
 */
export async function readHistory(db: Executor, range: HistoryRange): Promise<History> {
  const { rangeMs, bucketMs } = HISTORY_RANGES[range];
  // Per bucket its first sample and its last (by the primary key's order within the range).
  const { rows } = await db.query(
    `WITH s AS (
       SELECT floor(extract(epoch FROM at) * 1000 / $2::float8) AS b, extract(epoch FROM at) * 1000 AS at_ms, counters
         FROM stats_samples
        WHERE at >= now() - $1::float8 * interval '1 millisecond'
     )
     SELECT f.b, f.b * $2::float8 AS t, f.at_ms AS first_ms, f.counters AS first_counters, l.at_ms AS last_ms, l.counters AS last_counters,
            extract(epoch FROM now()) * 1000 AS now_ms
       FROM (SELECT DISTINCT ON (b) b, at_ms, counters FROM s ORDER BY b, at_ms) f
       JOIN (SELECT DISTINCT ON (b) b, at_ms, counters FROM s ORDER BY b, at_ms DESC) l USING (b)
      ORDER BY f.b`,
    [rangeMs, bucketMs],
  );
  type Sample = { at: number; counters: Partial<WorkerTotals> };
  const buckets = rows.map((r) => ({
    t: Number(r.t),
    first: { at: Number(r.first_ms), counters: r.first_counters as Partial<WorkerTotals> } as Sample,
    last: { at: Number(r.last_ms), counters: r.last_counters as Partial<WorkerTotals> } as Sample,
  }));
  const nowMs = Number(rows[0]?.now_ms ?? 0);
  const leasesLost = rows.length ? await readLeasesLost(db, bucketMs, rangeMs, nowMs) : new Map<number, number>();
  const points: HistoryPoint[] = [];
  for (let k = 0; k < buckets.length; k++) {
    const bucket = buckets[k]!;
    const a = bucket.first;
    const next = buckets[k + 1]?.first;
    const b = next && next.at - bucket.last.at <= HISTORY_HOLE_BUCKETS * bucketMs ? next : bucket.last;
    const seconds = (b.at - a.at) / 1000;
    if (seconds <= 0) continue;
    // Three significant figures, not two decimals: in an hour's bucket 17 dead-lettered jobs
    // are 0.0047 jobs/s, which two decimals showed as none at all.
    const rate = (key: (typeof RATE_KEYS)[number]) => Number((Math.max(0, Number(b.counters[key] ?? 0) - Number(a.counters[key] ?? 0)) / seconds).toPrecision(3));
    // Over the part of the bucket the count covers, not the samples' span: the attempts are
    // counted per bucket, within the range (the current bucket has only begun; the range's
    // start cuts into the first).
    const coveredMs = Math.min(bucket.t + bucketMs, nowMs) - Math.max(bucket.t, nowMs - rangeMs);
    const lost = Number(((leasesLost.get(bucket.t) ?? 0) / (Math.max(coveredMs, 1_000) / 1000)).toPrecision(3));
    points.push({ t: bucket.t, claimed: rate('claimed'), completed: rate('completed'), failed: rate('failed'), retried: rate('retried'), recovered: lost });
  }
  const { rows: ends } = await db.query(
    `(SELECT at, by_type FROM stats_samples WHERE at >= now() - $1::float8 * interval '1 millisecond' ORDER BY at LIMIT 1)
     UNION ALL
     (SELECT at, by_type FROM stats_samples WHERE at >= now() - $1::float8 * interval '1 millisecond' ORDER BY at DESC LIMIT 1)`,
    [rangeMs],
  );
  const [first, last] = ends as { at: Date; by_type: TypeTotals[] }[];
  // Lost leases as the attempts record them (a worker killed before its heartbeat lost its
  // count); those of jobs retention has deleted since are gone with them.
  const types = first && last && first.at < last.at ? withLostLeases(typeWindow(first.by_type, last.by_type), await readLostLeases(db, first.at, last.at)) : [];
  return { range, rangeMs, bucketMs, since: first?.at ?? null, until: last?.at ?? null, points, types };
}
