/**
 * The failure chart's series counted from the rows themselves, not the workers' counters
 * (which lose what a worker counted and was killed before reporting): jobs moved to the dead
 * letter, and attempts whose lease was lost, per bucket. Both read by the console's live
 * samples (stats-cache); lost leases also by the record's 24 h and 7 d ranges (history).
 */
import type { Executor } from '../db/client';

/** The most rows either series reads (the newest): a bound on its cost. */
export const SERIES_ROWS = 100_000;

/**
 * Jobs in the dead letter by when they failed, per `bucketMs` bucket of the `historyMs` up to
 * `untilMs` (the database clock when the caller read it; bucket start → jobs): read from the jobs themselves
 * (jobs_failed_idx, newest first, at most SERIES_ROWS), so the chart holds every
 * failure (the workers' counters lose the ones a crash took with the process). A job
 * requeued since has left the series; past SERIES_ROWS failures in the hour,
 * the oldest buckets are not counted (the chart then starts later than the burst).
 */
export const readDeadLettered = (db: Executor, bucketMs: number, historyMs: number, untilMs: number) =>
  countPerBucket(
    db,
    `SELECT finished_at FROM jobs
      WHERE status = 'failed' AND finished_at > ${UNTIL} - $2::int * interval '1 ms' AND finished_at <= ${UNTIL}
      ORDER BY finished_at DESC NULLS LAST LIMIT $3`,
    bucketMs,
    historyMs,
    untilMs,
  );

/**
 * Attempts whose lease was lost, per `bucketMs` bucket of the `historyMs` up to `untilMs`
 * (bucket start on the database clock → attempts), from the attempt history (ended_attempts_lost_at_idx,
 * newest first, at most SERIES_ROWS): the workers' own count of the jobs they
 * recovered loses what a worker counted and was then killed before reporting, and a poison
 * job kills the very worker that took it over. An operator's Recover counts here too.
 */
export const readLeasesLost = (db: Executor, bucketMs: number, historyMs: number, untilMs: number) =>
  countPerBucket(
    db,
    `SELECT finished_at FROM ended_attempts
      WHERE outcome = 'lease_lost' AND finished_at > ${UNTIL} - $2::int * interval '1 ms' AND finished_at <= ${UNTIL}
      ORDER BY finished_at DESC LIMIT $3`,
    bucketMs,
    historyMs,
    untilMs,
  );

/**
 * The end of a series' window: a time the caller read from the database (ms since the epoch),
 * so the counts cover exactly what its rates divide by (this statement's own now() is later).
 */
const UNTIL = `to_timestamp($4::float8 / 1000)`;

/**
 * Rows of `newest` (a read of `finished_at`, newest first, in the $2 ms up to $4, at most $3
 * rows) per `bucketMs` bucket: bucket start (ms since the epoch, on the database clock) → rows.
 */
async function countPerBucket(db: Executor, newest: string, bucketMs: number, historyMs: number, untilMs: number): Promise<Map<number, number>> {
  const { rows } = await db.query(
    `SELECT (floor(extract(epoch FROM finished_at) * 1000 / $1) * $1)::float8 AS t, count(*)::int AS n
       FROM (${newest}) f
      GROUP BY 1`,
    [bucketMs, historyMs, SERIES_ROWS, untilMs],
  );
  return new Map(rows.map((r) => [Number(r.t), r.n as number]));
}
