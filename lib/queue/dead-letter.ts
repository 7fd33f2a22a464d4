/**
 * The dead letter, triaged: failed jobs grouped by type and error fingerprint (see
 * fingerprint.ts), the group that failed last first (triage starts from what is failing
 * now; a big old group does not bury a fresh incident of three jobs). The grouping reads at
 * most GROUP_SAMPLE of the latest failures (jobs_failed_idx, by finish time: the highest
 * ids would leave out an old job requeued that fails again now), so its cost is bounded
 * however large the dead letter grows; the answer says when it was a sample. Acting on a
 * group resolves the group's filter over every failed job (bulk.ts).
 */
import type { Executor } from '../db/client';
import { errorPatternSql } from './fingerprint';

export const GROUP_SAMPLE = 20_000;

export interface DeadLetterGroup {
  type: string;
  fingerprint: string;
  /** The error's shape, variable parts replaced (# for tokens with digits, ? for quoted values). */
  pattern: string;
  /** The first error line of the group's latest failure (sampleJobId). */
  sampleError: string | null;
  sampleJobId: string;
  count: number;
  queues: string[];
  newestFailedAt: Date | null;
  oldestFailedAt: Date | null;
}

export interface DeadLetter {
  groups: DeadLetterGroup[];
  /** Failed jobs looked at, and whether that was all of them. */
  examined: number;
  complete: boolean;
  dbNow: Date;
}

export async function deadLetterGroups(db: Executor, sample = GROUP_SAMPLE): Promise<DeadLetter> {
  const { rows } = await db.query(
    `WITH sampled AS (
       -- The latest failures, from jobs_failed_idx (one more than the sample: whether
       -- there are more).
       SELECT ARRAY(SELECT job_id FROM jobs WHERE status = 'failed'
                     ORDER BY finished_at DESC NULLS LAST, job_id DESC NULLS LAST LIMIT $1 + 1) AS ids
     ), recent AS (
       SELECT job_id, type, queue, error, finished_at FROM jobs, sampled
        WHERE job_id = ANY(sampled.ids[1:$1])
          AND status = 'failed'
     ), shaped AS (
       SELECT *, ${errorPatternSql('error')} AS pattern FROM recent
     )
     SELECT type, left(md5(pattern), 12) AS fingerprint, pattern, count(*)::int AS n,
            (array_agg(split_part(coalesce(error, ''), E'\\n', 1) ORDER BY finished_at DESC NULLS LAST, job_id DESC NULLS LAST))[1] AS sample_error,
            (array_agg(job_id ORDER BY finished_at DESC NULLS LAST, job_id DESC NULLS LAST))[1]::text AS sample_job_id,
            (array_agg(DISTINCT queue))[1:5] AS queues,
            max(finished_at) AS newest, min(finished_at) AS oldest,
            (SELECT count(*) FROM recent)::int AS examined,
            (SELECT cardinality(ids) > $1 FROM sampled) AS more,
            now() AS db_now
       FROM shaped GROUP BY type, pattern
      ORDER BY max(finished_at) DESC NULLS LAST, n DESC
      LIMIT 500`,
    [sample],
  );
  const examined = rows[0]?.examined ?? 0;
  return {
    groups: rows.map((r) => ({
      type: r.type,
      fingerprint: r.fingerprint,
      pattern: r.pattern,
      sampleError: r.sample_error || null,
      sampleJobId: r.sample_job_id,
      count: r.n,
      queues: r.queues,
      newestFailedAt: r.newest,
      oldestFailedAt: r.oldest,
    })),
    examined,
    complete: !rows[0]?.more,
    dbNow: rows[0]?.db_now ?? new Date(),
  };
}
