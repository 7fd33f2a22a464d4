import { holdsSingletonKey, OWNER_GONE_SQL, singletonHolderSql } from '../job';
import { asSeen, JOB_COLUMNS, jobColumns, type Statement } from './fragments';

/**
 * jobCancel — an operator cancels jobs. Waiting jobs end at once; a running job gets a
 * cancel request that its worker observes through its next heartbeat (and that recover
 * turns into `cancelled` if the worker is gone).
 * Params: $1 job_id[], $2 the jobs as the caller saw them (asSeen; NULL = no expectation).
 * Compare: queued or retrying; or running without a cancel request yet; as seen.
 * Returns: job_id and new status (cancelled, or running = requested) of each changed job.
 */
export const jobCancel: Statement = {
  name: 'leasehold_job_cancel',
  text: `
UPDATE jobs
   SET status = CASE WHEN status = 'running' THEN 'running'::job_status ELSE 'cancelled'::job_status END,
       finished_at = CASE WHEN status = 'running' THEN NULL ELSE now() END,
       cancel_requested_at = now()
 WHERE job_id = ANY($1::bigint[])
   AND (status IN ('queued', 'retrying') OR (status = 'running' AND cancel_requested_at IS NULL))
   AND ${asSeen('$2')}
RETURNING ${JOB_COLUMNS}`,
};

/**
 * jobRequeue — an operator puts finished or waiting jobs back in the queue, due now ("run
 * now", for a retry waiting out its backoff or a job scheduled for later).
 * Params: $1 job_id[], $2 reset_attempts (boolean), $3 the jobs as the caller saw them
 *         (asSeen; NULL = no expectation).
 * Compare: failed, cancelled, completed or retrying, or queued but not due yet (a running
 *          job is refused: use jobRevoke; a queued job already due is left as it is); as seen;
 *          a finished job's singleton key free (see requeueTargets).
 * Swap: queued, run_at = now(). attempt_count never goes down (it is the fencing token);
 *       instead max_attempts is raised so the job has at least one attempt left, or a
 *       whole fresh budget (attempt_budget) with $2. A completed job's result and
 *       checkpoints are let go.
 * Returns: the requeued rows, each with the result key it let go (dropped_result_key), read
 *          from the row locked here: the caller deletes that blob, or nothing would.
 */
const requeueable = `(status IN ('failed', 'cancelled', 'completed', 'retrying') OR (status = 'queued' AND run_at > now()))`;
/**
 * The ids of the selection ($1) to requeue: those the compare accepts, but a finished job goes
 * back to waiting only with its singleton key free — held by no unfinished job (an enqueue
 * took it since), and by no older finished job the statement requeues too (the oldest takes
 * it). Otherwise the statement would break jobs_singleton_key_idx. Chosen once, over the
 * accepted rows (a window, not a probe of the selection per row). A key taken by a concurrent
 * statement after this one's snapshot still breaks it: ops.jobRequeue tries again, and the
 * next statement sees it.
 */
const finished = `status IN ('failed', 'cancelled', 'completed')`;
const requeueTargets = `
  SELECT c.job_id FROM (
    SELECT job_id, singleton_key, ${finished} AS finished,
           row_number() OVER (PARTITION BY singleton_key, ${finished} ORDER BY job_id) AS nth
      FROM jobs WHERE job_id = ANY($1::bigint[]) AND ${requeueable} AND ${asSeen('$3')}) c
   WHERE c.singleton_key IS NULL OR NOT c.finished
      OR (c.nth = 1 AND NOT EXISTS (SELECT 1 FROM jobs h WHERE h.singleton_key = c.singleton_key AND ${holdsSingletonKey('h')}))`;
export const jobRequeue: Statement = {
  name: 'leasehold_job_requeue',
  // The compare in the locking read as well: running jobs in the selection are never
  // locked, so their heartbeats and completions never wait on (or deadlock with) a requeue.
  text: `
UPDATE jobs
   SET status = 'queued', run_at = now(), finished_at = NULL, cancel_requested_at = NULL,
       result_key = NULL,
       -- a completed run is over: the next one starts from the first step (a failed or
       -- cancelled one resumes from its checkpoints)
       checkpoints = CASE WHEN status = 'completed' THEN NULL ELSE checkpoints END,
       max_attempts = GREATEST(max_attempts, attempt_count + CASE WHEN $2::boolean THEN attempt_budget ELSE 1 END)
  FROM (SELECT job_id AS before_id, result_key AS dropped_result_key FROM jobs
         WHERE job_id IN (${requeueTargets}) AND ${requeueable} AND ${asSeen('$3')} FOR UPDATE) before
 WHERE job_id = before.before_id
   AND ${requeueable}
   AND ${asSeen('$3')}
RETURNING ${JOB_COLUMNS}, before.dropped_result_key`,
};

/**
 * jobReschedule — an operator moves waiting jobs: a new due time, a new priority, or both
 * (a job scheduled for the wrong hour, one that must go ahead of the backlog or behind it).
 * Params: $1 job_id[], $2 run_at (NULL: kept; in the past: now(), as an enqueue stores it),
 *         $3 priority (NULL: kept), $4 the jobs as the caller saw them (asSeen).
 * Compare: queued or retrying (a running job's time and place are its worker's; a finished
 *          one is requeued, not moved); as seen.
 * Swap: run_at and priority only: the attempts, the budget and the checkpoints stay. A ring
 *       already in Redis for the job stays there (but for a demotion's, see ops.jobReschedule):
 *       popped, it claims the job only if it is due by then (a job moved later waits for the
 *       sweep's ring when it comes due).
 * Returns: the rescheduled rows, each with its old priority and `due` (ring the doorbell for it,
 *          at its new level).
 */
export const jobReschedule: Statement = {
  name: 'leasehold_job_reschedule',
  // The priority before, read from the row locked here: a job moved to a lower priority has
  // its ring taken out of its old level's list (ops.jobReschedule).
  text: `
UPDATE jobs
   SET run_at = CASE WHEN $2::timestamptz IS NULL THEN jobs.run_at ELSE GREATEST($2::timestamptz, now()) END,
       priority = coalesce($3::smallint, jobs.priority)
  FROM (SELECT job_id AS before_id, priority AS old_priority FROM jobs
         WHERE job_id = ANY($1::bigint[]) AND status IN ('queued', 'retrying') AND ${asSeen('$4')} FOR UPDATE) before
 WHERE jobs.job_id = before.before_id
   AND jobs.status IN ('queued', 'retrying')
   AND ${asSeen('$4')}
RETURNING ${jobColumns('jobs')}, before.old_priority, jobs.run_at <= now() AS due`,
};

/**
 * jobRevoke — an operator takes running jobs away from their owners (explicitly chosen):
 * the job is queued again, and because status leaves 'running' the old owner's fence no
 * longer matches: its heartbeat, completion and failure all change nothing.
 * Params: $1 job_id[], $2 reason, $3 reset the attempt budget (boolean), $4 the jobs as
 *         the caller saw them (asSeen; NULL = no expectation).
 * Compare: status = 'running', no cancel requested (an operator asked it to stop: taken
 *          back, it would run again, the cancel lost); as seen.
 * Swap: queued, due now, lease cleared, the revoked attempt given back (max_attempts + 1;
 *       with $3, at least a whole budget after it, as jobRequeue gives) and recorded as `aborted`;
 *       lease_lost_streak back to 0 (this attempt's lease was taken, not lost: the losses
 *       before it are no longer in a row), unless the lease had already run out (its worker
 *       gone, the sweep not there yet): that loss counts, as the sweep would count it.
 * Returns: the requeued rows.
 */
export const jobRevoke: Statement = {
  name: 'leasehold_job_revoke',
  text: `
WITH done AS (
  UPDATE jobs
     SET status = 'queued', run_at = now(), lease_expires_at = NULL,
         max_attempts = GREATEST(max_attempts + 1, attempt_count + CASE WHEN $3::boolean THEN attempt_budget ELSE 0 END),
         lease_lost_streak = CASE WHEN lease_expires_at < now() THEN lease_lost_streak + 1 ELSE 0 END
   WHERE job_id = ANY($1::bigint[])
     AND status = 'running'
     AND cancel_requested_at IS NULL
     AND ${asSeen('$4')}
  RETURNING ${JOB_COLUMNS}
), recorded AS (
  INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, heartbeat_at, finished_at, outcome, error)
  SELECT job_id, attempt_count, worker_id, started_at, heartbeat_at, now(), 'aborted', $2 FROM done
)
SELECT * FROM done`,
};

/**
 * jobDelete — an administrator deletes finished jobs, and their attempts with them.
 * Params: $1 job_id[], $2 the jobs as the caller saw them (asSeen; NULL = no expectation).
 * Compare: completed, failed or cancelled (never a job that may still run); as seen.
 * Returns: the deleted job ids, and their result keys (the caller deletes those blobs).
 */
export const jobDelete: Statement = {
  name: 'leasehold_job_delete',
  text: `
WITH gone AS (
  DELETE FROM jobs
   WHERE job_id = ANY($1::bigint[])
     AND status IN ('completed', 'failed', 'cancelled')
     AND ${asSeen('$2')}
  RETURNING job_id, result_key
), attempts AS (
  DELETE FROM ended_attempts WHERE job_id = ANY (ARRAY(SELECT job_id FROM gone))
)
SELECT job_id, result_key FROM gone`,
};

/**
 * attemptsOfDeletedJobs — the attempt rows of deleted jobs, left by jobDelete when they
 * committed after its snapshot (it waited on a row lock meanwhile). Only jobs with no row.
 * Params: $1 job_id[].
 */
export const attemptsOfDeletedJobs: Statement = {
  name: 'leasehold_attempts_of_deleted_jobs',
  text: `
DELETE FROM ended_attempts a
 WHERE a.job_id = ANY($1::bigint[])
   AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.job_id = a.job_id)`,
};

/**
 * jobCurrent — the current rows of jobs, with the database's now(): what a refused
 * transition reports as the reason (read-only, a fresh snapshot after the refusal).
 * Params: $1 job_id[].
 */
export const jobCurrent: Statement = {
  name: 'leasehold_job_current',
  text: `
SELECT ${JOB_COLUMNS}, extract(epoch FROM lease_expires_at - now()) * 1000 AS lease_remaining_ms, ${OWNER_GONE_SQL},
       ${singletonHolderSql('jobs')} AS singleton_holder, run_at > now() AS not_yet_due
  FROM jobs WHERE job_id = ANY($1::bigint[])`,
};
