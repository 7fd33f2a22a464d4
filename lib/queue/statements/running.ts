import { at, ms, type Statement } from './fragments';

/**
 * The fence of a batched write: this worker holds the job's current lease. The ids are the
 * index condition; each row reads its own fencing token by its id (see `at`), so the plan is
 * one index scan whatever plan PostgreSQL caches for the prepared statement (a join with
 * unnest() was planned, generically, as a nested loop re-running the unnest per row).
 * "Running" is spelled `lease_expires_at IS NOT NULL` — the same thing, by the check
 * jobs_lease_iff_running — so that jobs_running_idx (running rows by worker) cannot serve
 * it: through that index a worker holding 500 jobs had every one of them compared with
 * every id of the batch; the primary key finds each id directly.
 */
const fence = (workerParam: string) => `jobs.job_id = ANY($1::bigint[])
     AND jobs.attempt_count = ${at('$2', 'int')}
     AND jobs.worker_id = ${workerParam}
     AND jobs.lease_expires_at IS NOT NULL`;

/**
 * jobHeartbeat — renew the leases of jobs this worker still owns (all of a process's
 * jobs in one statement).
 * Params: $1 job_id[], $2 {job_id: attempt} (fencing tokens), $3 worker_id, $4 lease_ms.
 * Compare: running (the fence) AND worker_id = $3 AND attempt_count = the job's token.
 * Rows another transaction holds locked are skipped, not waited for: one row held by a
 * long transaction would otherwise stall the renewal of every lease of the process until
 * all of them ran out. A skipped row is reported `busy`: not renewed this time, not lost.
 * (Skipped and still there: a row deleted meanwhile is gone, so its job is lost, not busy.)
 * Returns: the renewed jobs and whether an operator asked to cancel each, and the busy
 *          ones. A job missing from both is no longer owned: abort its handler and never
 *          write its result.
 */
export const jobHeartbeat: Statement = {
  name: 'leasehold_job_heartbeat',
  text: `
WITH held AS (
  SELECT job_id FROM jobs WHERE job_id = ANY($1::bigint[]) FOR NO KEY UPDATE SKIP LOCKED
), renewed AS (
  UPDATE jobs
     SET heartbeat_at = now(), lease_expires_at = now() + ${ms('$4')}
    FROM held
   WHERE held.job_id = jobs.job_id AND ${fence('$3')}
  RETURNING jobs.job_id, jobs.cancel_requested_at IS NOT NULL AS cancel_requested
)
SELECT job_id, cancel_requested, false AS busy FROM renewed
UNION ALL
SELECT id, false, true FROM unnest($1::bigint[]) AS id
 WHERE id NOT IN (SELECT job_id FROM held)
   AND EXISTS (SELECT 1 FROM jobs WHERE job_id = id)`,
};

/**
 * jobCheckpoint — save a named piece of a running job's progress, for the next attempt.
 * Params: $1 job_id, $2 worker_id, $3 attempt (fencing token), $4 name, $5 value (JSON).
 * Compare: the fence (status = 'running', worker_id, attempt_count).
 * Swap: checkpoints[name] = {value, attempt, at: now()}.
 * Returns: the job id, or no row = the lease is lost: the checkpoint is not saved.
 */
export const jobCheckpoint: Statement = {
  name: 'leasehold_job_checkpoint',
  text: `
UPDATE jobs
   SET checkpoints = coalesce(checkpoints, '{}'::jsonb)
                     || jsonb_build_object($4::text, jsonb_build_object('value', $5::jsonb, 'attempt', attempt_count, 'at', now()))
 WHERE job_id = $1 AND worker_id = $2 AND attempt_count = $3 AND status = 'running'
RETURNING job_id`,
};

/**
 * jobComplete — record success for jobs this worker still owns.
 * Params: $1 job_id[], $2 {job_id: attempt}, $3 {job_id: result_key} (absent = no result), $4 worker_id.
 * Compare: the fence (status = 'running', worker_id, attempt_count).
 * Swap: completed, lease released, the attempt recorded as `completed`.
 * Returns: the completed job ids. A missing id lost its lease: its result is discarded.
 */
export const jobComplete: Statement = {
  name: 'leasehold_job_complete',
  text: `
WITH done AS (
  UPDATE jobs
     SET status = 'completed', finished_at = now(), lease_expires_at = NULL,
         cancel_requested_at = NULL, result_key = ${at('$3', 'text')}, error = NULL, lease_lost_streak = 0
   WHERE ${fence('$4')}
  RETURNING jobs.job_id, jobs.attempt_count, jobs.worker_id, jobs.started_at, jobs.heartbeat_at
), recorded AS (
  INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, heartbeat_at, finished_at, outcome)
  SELECT job_id, attempt_count, worker_id, started_at, heartbeat_at, now(), 'completed' FROM done
)
SELECT job_id FROM done`,
};

/**
 * jobFail — record a handler error for jobs this worker still owns: retry after a backoff
 * while attempts are left, else move to `failed` (the dead letter) — unless an operator
 * asked to cancel the job meanwhile (the worker may not have heard yet: it learns at its
 * next heartbeat): then it ends `cancelled`, as the operator was told it would.
 * A snooze (the handler's SnoozeError) is no failure: the job is queued for later with the
 * attempt given back.
 * Params: $1 job_id[], then each keyed by job id: $2 attempt, $3 error, $4 error_stack,
 *         $5 permanent, $6 backoff_ms (a snooze's delay), $8 snooze; $7 worker_id.
 * Compare: the fence (status = 'running', worker_id, attempt_count).
 * Swap: cancelled (a cancel was requested), queued with run_at = now() + delay and
 *       max_attempts + 1 (a snooze; the job's last error kept), retrying with run_at = now()
 *       + backoff, or failed (permanent error or no attempts left); the attempt recorded as
 *       `cancelled`, `snoozed`, `retried` or `failed` with its message.
 * Returns: job_id, the new status, queue and due time of each job that changed.
 */
const cancelRequested = `jobs.cancel_requested_at IS NOT NULL`;
const snoozed = `(NOT ${cancelRequested} AND coalesce(${at('$8', 'boolean')}, false))`;
const dead = `(NOT ${snoozed} AND (${at('$5', 'boolean')} OR jobs.attempt_count >= jobs.max_attempts))`;
export const jobFail: Statement = {
  name: 'leasehold_job_fail',
  text: `
WITH done AS (
  UPDATE jobs
     SET status = CASE WHEN ${cancelRequested} THEN 'cancelled'::job_status
                       WHEN ${snoozed} THEN 'queued'::job_status
                       WHEN ${dead} THEN 'failed'::job_status ELSE 'retrying'::job_status END,
         run_at = CASE WHEN ${cancelRequested} OR ${dead} THEN jobs.run_at ELSE now() + ${ms(at('$6', 'int'))} END,
         finished_at = CASE WHEN ${cancelRequested} OR ${dead} THEN now() ELSE NULL END,
         max_attempts = jobs.max_attempts + CASE WHEN ${snoozed} THEN 1 ELSE 0 END,
         lease_expires_at = NULL,
         cancel_requested_at = CASE WHEN ${cancelRequested} THEN jobs.cancel_requested_at ELSE NULL END,
         -- a snooze's message is the attempt's, never the job's error (cancelled or not)
         error = CASE WHEN coalesce(${at('$8', 'boolean')}, false) THEN jobs.error ELSE ${at('$3', 'text')} END, lease_lost_streak = 0
   WHERE ${fence('$7')}
  RETURNING jobs.job_id, jobs.status, jobs.queue, jobs.run_at, jobs.attempt_count, jobs.worker_id,
            jobs.started_at, jobs.heartbeat_at, ${at('$3', 'text')} AS message, ${at('$4', 'text')} AS error_stack
), recorded AS (
  INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, heartbeat_at, finished_at, outcome, error, error_stack)
  SELECT job_id, attempt_count, worker_id, started_at, heartbeat_at, now(),
         -- a failure never leaves a job queued: only a snooze does
         CASE status WHEN 'failed' THEN 'failed'::attempt_outcome WHEN 'cancelled' THEN 'cancelled'::attempt_outcome
                     WHEN 'queued' THEN 'snoozed'::attempt_outcome ELSE 'retried'::attempt_outcome END,
         message, error_stack
    FROM done
)
SELECT job_id, status, queue, run_at FROM done`,
};

/**
 * jobCancelAck — the worker observed an operator's cancel (through its heartbeat) and
 * stopped the handler, or never started it (claimed ahead): finish the job as `cancelled`.
 * Params: $1 job_id[], $2 {job_id: attempt}, $3 worker_id, $4 the attempt's error text,
 *         $5 whether the handler ran (see jobRelease: a run of lost leases ends here).
 * Compare: the fence, and a cancel was requested.
 * Returns: the cancelled job ids.
 */
export const jobCancelAck: Statement = {
  name: 'leasehold_job_cancel_ack',
  text: `
WITH done AS (
  UPDATE jobs
     SET status = 'cancelled', finished_at = now(), lease_expires_at = NULL,
         lease_lost_streak = CASE WHEN $5::boolean THEN 0 ELSE jobs.lease_lost_streak END
   WHERE ${fence('$3')}
     AND jobs.cancel_requested_at IS NOT NULL
  RETURNING jobs.job_id, jobs.queue, jobs.type, jobs.attempt_count, jobs.worker_id, jobs.started_at, jobs.heartbeat_at
), recorded AS (
  INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, heartbeat_at, finished_at, outcome, error)
  SELECT job_id, attempt_count, worker_id, started_at, heartbeat_at, now(), 'cancelled', $4::text
    FROM done
)
SELECT job_id, queue, type FROM done`,
};

/**
 * jobRelease — hand leases back without a verdict (graceful shutdown after the grace
 * period): the job is queued again at once and the attempt it used is given back.
 * Params: $1 job_id[], $2 {job_id: attempt}, $3 worker_id, $4 reason, $5 whether the
 *         handlers ran (a shutdown's running jobs; not jobs claimed ahead and never started).
 * Compare: the fence, and no cancel requested (a cancelled job is not queued again).
 * Swap: queued, due at once with its run_at kept (its place in line, as jobRecoverExpired),
 *       max_attempts + 1 (an interrupted attempt is not the job's fault); the attempt
 *       recorded as `aborted`. A job that ran until its worker handed it back did not lose
 *       its lease: lease_lost_streak (losses in a row) starts again from 0, as after a
 *       completion or a failure. One that never started says nothing either way: kept.
 * Returns: job_id, queue and priority of each released job (ring the doorbell for them).
 */
export const jobRelease: Statement = {
  name: 'leasehold_job_release',
  text: `
WITH done AS (
  UPDATE jobs
     SET status = 'queued', lease_expires_at = NULL,
         max_attempts = jobs.max_attempts + 1,
         lease_lost_streak = CASE WHEN $5::boolean THEN 0 ELSE jobs.lease_lost_streak END
   WHERE ${fence('$3')}
     AND jobs.cancel_requested_at IS NULL
  RETURNING jobs.job_id, jobs.queue, jobs.priority, jobs.attempt_count, jobs.worker_id, jobs.started_at, jobs.heartbeat_at
), recorded AS (
  INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, heartbeat_at, finished_at, outcome, error)
  SELECT job_id, attempt_count, worker_id, started_at, heartbeat_at, now(), 'aborted', $4 FROM done
)
SELECT job_id, queue, priority FROM done`,
};

/**
 * attemptOutcomes — how these attempts of this worker ended, from the attempt history
 * (read-only). A worker asks after a write it retried was refused: the try that errored
 * (a timeout, a connection lost after COMMIT) may have been recorded after all.
 * Params: $1 job_id[], $2 attempt[] (pairwise), $3 worker_id.
 * Returns: job_id, outcome of each attempt that has ended.
 */
export const attemptOutcomes: Statement = {
  name: 'leasehold_attempt_outcomes',
  text: `
SELECT a.job_id, a.outcome
  FROM unnest($1::bigint[], $2::int[]) AS t(job_id, attempt)
  JOIN ended_attempts a ON a.job_id = t.job_id AND a.attempt = t.attempt
 WHERE a.worker_id = $3`,
};

/**
 * jobsHeldBy — the running jobs leased to one worker (read-only). A worker asks after a
 * claim that errored without the server's answer (a timeout, a connection lost after
 * COMMIT): what that claim took is leased to it but runs nowhere, and is given back
 * (jobRelease) rather than left to expire and spend an attempt.
 * Params: $1 worker_id.
 * Returns: job_id, attempt_count of each.
 */
export const jobsHeldBy: Statement = {
  name: 'leasehold_jobs_held_by',
  text: `SELECT job_id, attempt_count FROM jobs WHERE worker_id = $1 AND status = 'running'`,
};
