import type { Statement } from './fragments';

/** A duration that may pass 24.8 days (an int of milliseconds): retention windows. */
const msLong = (param: string) => `(${param}::bigint * interval '1 millisecond')`;

/**
 * jobPrune — retention: deletes finished jobs, with their attempt history, once they have
 * been finished longer than the window kept for their status, reading one range of ids at
 * a time (`$1` up). No index held completed rows when this walk was written (jobs_finished_idx,
 * 0021, now holds finished ones by finish time): the sweep walks the primary key, from the oldest id, and starts
 * again from the bottom once a range reaches jobs younger than every window (ids follow
 * enqueue order, and a job finishes after its enqueue) or the end of the table.
 * Params: $1 cursor (ids above it), $2 ids per range, $3 completed, $4 failed, $5 cancelled
 *         window ms (NULL = kept for ever), $6 the shortest of them.
 * Compare: completed, failed or cancelled, finished before now() less its status's window;
 *          re-checked on the row the DELETE locks (a job requeued meanwhile stays); a row
 *          another transaction holds locked is skipped, left for a later walk.
 * Returns: one row — ids read, the last of them, whether the range reached young jobs,
 *          how many jobs were deleted, and [id, result key or null] of those that ran or
 *          point to a result (the caller deletes their results: a crashed attempt may have
 *          left one nothing points to).
 */
const pruneable = `((j.status = 'completed' AND j.finished_at < now() - ${msLong('$3')})
       OR (j.status = 'failed' AND j.finished_at < now() - ${msLong('$4')})
       OR (j.status = 'cancelled' AND j.finished_at < now() - ${msLong('$5')}))`;
export const jobPrune: Statement = {
  name: 'leasehold_job_prune',
  text: `
WITH span AS MATERIALIZED (
  SELECT job_id, created_at FROM jobs WHERE job_id > $1::bigint ORDER BY job_id LIMIT $2
), doomed AS (
  -- The range as bounds, so the primary key serves it (joined to span, the planner chose a
  -- scan of the whole table): the same rows, ids being handed out in order. Locked here,
  -- skipping rows another transaction holds (an operator's session left open on a
  -- SELECT … FOR UPDATE): those wait for a later walk. Waited for, the sweep stopped there,
  -- its cluster-wide lock held, for as long as that transaction lasted — a worker's query
  -- timeout does not end the server's wait — and no expired lease was moved on meanwhile.
  SELECT job_id FROM jobs j
   WHERE j.job_id > $1::bigint AND j.job_id <= (SELECT max(job_id) FROM span)
     AND ${pruneable}
     FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM jobs j
   WHERE j.job_id > $1::bigint AND j.job_id <= (SELECT max(job_id) FROM span)
     AND j.job_id IN (SELECT job_id FROM doomed)
     AND ${pruneable}
  RETURNING j.job_id, j.result_key, j.attempt_count
), attempts AS (
  DELETE FROM ended_attempts WHERE job_id = ANY (ARRAY(SELECT job_id FROM gone))
)
SELECT (SELECT count(*) FROM span)::int AS scanned,
       (SELECT max(job_id) FROM span)::text AS last_id,
       coalesce((SELECT bool_or(created_at > now() - ${msLong('$6')}) FROM span), false) AS young,
       (SELECT count(*) FROM gone)::int AS deleted,
       (SELECT coalesce(json_agg(json_build_array(job_id::text, result_key)), '[]')
          FROM gone WHERE result_key IS NOT NULL OR attempt_count > 0) AS results`,
};

/** pruneWalkRead — where the shared retention walk goes on, and whether it rests now. */
export const pruneWalkRead: Statement = {
  name: 'leasehold_prune_walk_read',
  text: `SELECT cursor::text AS cursor, coalesce(rest_until > now(), false) AS resting FROM retention_walk`,
};

/** pruneWalkWrite — the walk's new position; $2: it ended, rest $3 ms (database clock). */
export const pruneWalkWrite: Statement = {
  name: 'leasehold_prune_walk_write',
  text: `UPDATE retention_walk SET cursor = $1::bigint,
                                rest_until = CASE WHEN $2::boolean THEN now() + ${msLong('$3')} ELSE rest_until END`,
};
