import { levelByLevel, SUSPECT_STREAK } from '../job';
import { JOB_COLUMNS, ms, type Statement, whyStopped } from './fragments';

/**
 * jobRecoverExpired — the recover sweep's write: running jobs whose lease expired (the
 * worker crashed, stalled or was cut off) move on, in batches.
 * Params: $1 batch limit, $2 job_id[] to restrict to (NULL = all).
 * Compare: status = 'running' AND lease_expires_at < now(), re-checked on the locked row
 *          in this same statement (a sweep never acts on a stale read).
 * Swap: cancelled if a cancel was requested; failed if no attempts are left (a job that
 *       keeps killing its worker ends in the dead letter instead of looping); otherwise
 *       retrying, due at once, its run_at kept: a job whose worker died keeps its place in
 *       line, ahead of jobs that came after it, for claims from PostgreSQL (oldest first)
 *       and for the sweep's re-rings (oldest first) alike — with run_at = now(), a recovered
 *       job whose ring was lost waited behind the whole backlog. The lost attempt is
 *       recorded as `lease_lost`.
 * Returns: job_id, queue, new status, and the worker that lost the job.
 */
export const jobRecoverExpired: Statement = {
  name: 'leasehold_job_recover_expired',
  text: `
WITH target AS (
  SELECT job_id, lease_expires_at FROM jobs
   WHERE status = 'running' AND lease_expires_at < now()
     AND ($2::bigint[] IS NULL OR job_id = ANY($2::bigint[]))
   ORDER BY lease_expires_at
   LIMIT $1
     FOR UPDATE SKIP LOCKED
), moved AS (
  UPDATE jobs j
     SET status = CASE WHEN j.cancel_requested_at IS NOT NULL THEN 'cancelled'::job_status
                       WHEN j.attempt_count >= j.max_attempts THEN 'failed'::job_status
                       ELSE 'retrying'::job_status END,
         finished_at = CASE WHEN j.cancel_requested_at IS NOT NULL OR j.attempt_count >= j.max_attempts
                            THEN now() ELSE NULL END,
         lease_expires_at = NULL,
         lease_lost_streak = j.lease_lost_streak + 1,
         error = CASE WHEN j.cancel_requested_at IS NOT NULL THEN 'cancelled by an operator; the worker stopped renewing its lease'
                      ELSE 'lease expired: worker ' || j.worker_id || ' stopped renewing (' || ${whyStopped('j.worker_id')} || ')' END
    FROM target
   WHERE j.job_id = target.job_id
     AND j.status = 'running' AND j.lease_expires_at < now()
  RETURNING j.job_id, j.queue, j.priority, j.type, j.status, j.attempt_count, j.max_attempts, j.worker_id, j.started_at,
            j.heartbeat_at, j.error, extract(epoch FROM now() - target.lease_expires_at) * 1000 AS expired_ms
), recorded AS (
  INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, heartbeat_at, finished_at, outcome, error)
  SELECT job_id, attempt_count, worker_id, started_at, heartbeat_at, now(), 'lease_lost', error FROM moved
)
SELECT job_id, queue, priority, type, status, attempt_count, max_attempts, worker_id, expired_ms FROM moved`,
};

/**
 * jobRecoverPreview — what jobRecoverExpired would move, without moving it.
 * Params: $1 limit, $2 job_id[] (NULL = all).
 * Returns: the expired running jobs with the status each would get and how long ago its
 *          lease expired (database clock).
 */
export const jobRecoverPreview: Statement = {
  name: 'leasehold_job_recover_preview',
  text: `
SELECT ${JOB_COLUMNS},
       CASE WHEN cancel_requested_at IS NOT NULL THEN 'cancelled'
            WHEN attempt_count >= max_attempts THEN 'failed'
            ELSE 'retrying' END AS would_become,
       extract(epoch FROM now() - lease_expires_at) * 1000 AS expired_ms
  FROM jobs
 WHERE status = 'running' AND lease_expires_at < now()
   AND ($2::bigint[] IS NULL OR job_id = ANY($2::bigint[]))
 ORDER BY lease_expires_at
 LIMIT $1`,
};

/**
 * jobDueQueues — queues that have due jobs, by a loose index scan over jobs_claim_idx
 * (cheap however long each queue is). Read-only; used by the sweep's signal repair.
 * Returns: queue names.
 */
export const jobDueQueues: Statement = {
  name: 'leasehold_job_due_queues',
  text: `
WITH RECURSIVE q AS (
  (SELECT queue FROM jobs WHERE status IN ('queued', 'retrying') ORDER BY queue LIMIT 1)
  UNION ALL
  SELECT (SELECT queue FROM jobs WHERE status IN ('queued', 'retrying') AND queue > q.queue ORDER BY queue LIMIT 1)
    FROM q WHERE q.queue IS NOT NULL
)
SELECT queue FROM q
 WHERE queue IS NOT NULL
   -- paused and limited queues are claimed by polling under their lock, not by doorbell
   AND NOT EXISTS (SELECT 1 FROM queues c WHERE c.name = q.queue)
 LIMIT 1000`,
};

/**
 * jobsNeverAnalyzed — the jobs table holds rows but has no planner statistics yet
 * (reltuples < 0: never analyzed nor vacuumed), as when a fresh table fills faster than
 * autovacuum's first visit, or autovacuum is off. The planner then guesses, and a claim of
 * a few hundred ids was planned as a scan of the whole backlog through jobs_claim_idx,
 * instead of a probe of the primary key per id (10 % of the throughput at a 20,000-job backlog).
 * Returns: never (boolean).
 */
export const jobsNeverAnalyzed: Statement = {
  name: 'leasehold_jobs_never_analyzed',
  text: `SELECT c.reltuples < 0 AND EXISTS (SELECT 1 FROM jobs) AS never FROM pg_class c WHERE c.oid = 'jobs'::regclass`,
};

/**
 * Takes the recover sweep's lock for this session (connection); false = another process
 * is sweeping. A session lock is released by the server if the process dies.
 */
export const recoverTryLock: Statement = {
  name: 'leasehold_recover_try_lock',
  text: `SELECT pg_try_advisory_lock(hashtext('leasehold.recover')) AS locked`,
};

export const recoverUnlock: Statement = {
  name: 'leasehold_recover_unlock',
  text: `SELECT pg_advisory_unlock(hashtext('leasehold.recover'))`,
};

/**
 * recoverSwept — the sweep ran (under its lock): when, by the database clock, and by whom
 * ($1, or NULL). An upsert: a row deleted by hand is made again, not left to read "never".
 */
export const recoverSwept: Statement = {
  name: 'leasehold_recover_swept',
  text: `INSERT INTO recover_sweep (id, swept_at, swept_by) VALUES (true, now(), $1)
         ON CONFLICT (id) DO UPDATE SET swept_at = excluded.swept_at, swept_by = excluded.swept_by`,
};

/**
 * jobDueWaiting — the first jobs of a queue in claim order (by priority, then oldest) that
 * have been due for at least $2 ms and are still waiting, suspects aside (see dueWaiting):
 * either their doorbell was lost (a crash between commit and push, a Redis flush or restart)
 * or every worker is busy. Read one
 * level after another (levelByLevel: the levels after the one that fills the limit are not
 * read; a sweep of a queue with a backlog on every level read 20 times the buffers when every
 * level's ranges were read). Off a job's path, so its planning matters less than a claim's.
 * Read-only.
 * Params: $1 queue, $2 grace_ms, $3 limit.
 * Returns: job_id, type, status, priority, run_at, created_at, waited_ms.
 */
const dueWaitingColumns = `job_id, type, status, priority, run_at, created_at, extract(epoch FROM now() - run_at) * 1000 AS waited_ms`;
// Not a suspect (lease_lost_streak ≥ SUSPECT_STREAK): a worker already holding one pops its
// ring and drops it, so a ring each sweep was churn (a hundred an hour for one held job); the
// workers' poll claims it once a worker holding none has a free slot.
const dueWaiting = `queue = $1 AND status IN ('queued', 'retrying') AND run_at <= now() - ${ms('$2')} AND lease_lost_streak < ${SUSPECT_STREAK}`;
const dueWaitingBy = (types?: string) => `
SELECT *
  FROM (${levelByLevel((level) =>
    types
      ? `
    SELECT c.*
      FROM (SELECT DISTINCT unnest(${types}::text[]) AS type) t
     CROSS JOIN LATERAL (
       SELECT ${dueWaitingColumns}
         FROM jobs
        WHERE ${dueWaiting} AND type = t.type AND priority = ${level}
        ORDER BY run_at, job_id
        LIMIT $3
     ) c
     ORDER BY c.run_at, c.job_id
     LIMIT $3`
      : `
    SELECT ${dueWaitingColumns}
      FROM jobs
     WHERE ${dueWaiting} AND priority = ${level}
     ORDER BY run_at, job_id
     LIMIT $3`,
  )}) w
 LIMIT $3`;
export const jobDueWaiting: Statement = { name: 'leasehold_job_due_waiting', text: dueWaitingBy() };

/**
 * jobDueWaitingOfTypes — jobDueWaiting for the types the queue's live workers have handlers
 * for, one index range per type and level (as claim.ts dueTarget): a job no live worker can run is
 * not worth a ring (each would be popped and dropped, every sweep), nor a read past it.
 * Params: as jobDueWaiting, and $4 the types (text[]).
 */
export const jobDueWaitingOfTypes: Statement = { name: 'leasehold_job_due_waiting_of_types', text: dueWaitingBy('$4') };
