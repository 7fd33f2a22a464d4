import { quietTokenSql } from '../job';
import type { Statement } from './fragments';

/**
 * workerRegister — one row per worker process incarnation. Its report starts with `quiet: false`:
 * this version reads quiet requests from the start (workerQuiet quiets only such a process). An id registered again (a runner
 * given a fixed workerId, restarted) is a new incarnation: it claims from its start, so an
 * operator's quiet of the previous one is cleared (kept, the row read "quiet" while the new
 * process claimed until its first heartbeat, then stopped claiming on a request it never got).
 * Returns its metrics: an id registered again, the counters its earlier incarnations reported.
 * Params: $1 worker_id, $2 host, $3 pid, $4 queues, $5 concurrency, $6 handled job types (NULL = any).
 */
export const workerRegister: Statement = {
  name: 'leasehold_worker_register',
  text: `
INSERT INTO workers (worker_id, host, pid, queues, concurrency, types, metrics)
VALUES ($1, $2, $3, $4::text[], $5, $6::text[], '{"quiet": false}')
ON CONFLICT (worker_id) DO UPDATE SET heartbeat_at = now(), stopped_at = NULL, queues = EXCLUDED.queues, types = EXCLUDED.types, concurrency = EXCLUDED.concurrency,
  quiet_at = NULL, quiet_by = NULL, metrics = workers.metrics || '{"quiet": false}'
RETURNING started_at, metrics`,
};

/**
 * workerHeartbeat — the process is alive; its counters so far. Answers whether an operator
 * has quieted it (no row: its row was deleted, answered as not quiet), and which request:
 * `quiet_token`, the request's time as exact text, which the process reports back once it
 * has stopped claiming (its report's `quiet`), so the workers page says "quiet" for this
 * request, never for an earlier one the process had read before a resume.
 * Params: $1 worker_id, $2 metrics (JSON).
 */
export const workerHeartbeat: Statement = {
  name: 'leasehold_worker_heartbeat',
  text: `
UPDATE workers SET heartbeat_at = now(), metrics = $2::jsonb WHERE worker_id = $1
RETURNING quiet_at IS NOT NULL AS quiet, ${quietTokenSql('workers')} AS quiet_token`,
};

/**
 * workerQuietState — a worker's row, when a quiet or resume changed nothing: why; and the
 * quiet request's token (see workerHeartbeat). Params: $1 worker_id.
 */
export const workerQuietState: Statement = {
  name: 'leasehold_worker_quiet_state',
  text: `SELECT stopped_at IS NOT NULL AS stopped, quiet_at IS NOT NULL AS quiet, metrics ? 'quiet' AS reads_quiet, ${quietTokenSql('workers')} AS quiet_token
  FROM workers WHERE worker_id = $1`,
};

/**
 * workerQuiet — quiet (true) or resume (false) running worker processes: a quiet one claims
 * nothing new (it reads the request with its next heartbeat). Only a process that has not
 * stopped; quieting a quiet one keeps its time. Answers the rows it changed.
 * Params: $1 worker_id[], $2 quiet, $3 by (actor).
 */
export const workerQuiet: Statement = {
  name: 'leasehold_worker_quiet',
  text: `
UPDATE workers SET quiet_at = CASE WHEN $2::boolean THEN now() END, quiet_by = CASE WHEN $2::boolean THEN $3::text END
 WHERE worker_id = ANY($1::text[]) AND stopped_at IS NULL AND (quiet_at IS NOT NULL) <> $2::boolean
   -- Quieted only once it has said it reads the request (its metrics carry "quiet"): a process
   -- of an earlier version would go on claiming while the console counted it out of its queues.
   AND (NOT $2::boolean OR metrics ? 'quiet')
RETURNING worker_id`,
};

/** workerStop — the process stopped cleanly. Params: $1 worker_id, $2 final metrics (JSON). */
export const workerStop: Statement = {
  name: 'leasehold_worker_stop',
  text: `UPDATE workers SET stopped_at = now(), heartbeat_at = now(), metrics = $2::jsonb WHERE worker_id = $1`,
};

/**
 * workerDied — the supervisor saw a worker process end without stopping (a crash, SIGKILL, a
 * poison job, its own stall kill): its row is marked stopped, with how it ended, so the
 * console no longer counts it alive (nor, later, stale); and when the supervisor knows the
 * process's worker id (the process said it over IPC when it started), the leases of the jobs
 * that id still holds end now, so the next recover sweep or a peer's claim takes them within
 * seconds instead of when the lease would have run out (30 s by default; minutes for a long
 * lease). The exit is certain (the supervisor's own child, reaped), and a worker id names one
 * process's one run, never reused: this can rescue no live worker (reliability.md §3.5: the
 * host and pid alone could be another container's process, so without the id no job is
 * touched and the leases run out as before). The lease is ended, not the job moved: the
 * sweep does that, recording the lost attempt with this exit, exactly as for a lease that ran
 * out. A statement the process sent before it died may still commit after this one; the
 * fence decides it as always (its completion of a job not yet taken over stands; once taken
 * over, it is refused).
 * Params: $1 host, $2 pid, $3 how it ended, $4 its worker id (NULL = not known).
 * Compare: the worker row — that id on that host and pid, else the newest of that host and
 *          pid — not stopped yet; the jobs — running, held by that id (the fence: every
 *          attempt that id holds is the dead process's), lease not yet expired, and only
 *          when the id belongs to that host and pid.
 * Swap: stopped_at = now(), exit = $3; lease_expires_at = now() (the database's clock).
 * Returns: the worker_id marked (NULL when none was) and how many leases ended.
 */
export const workerDied: Statement = {
  name: 'leasehold_worker_died',
  text: `
WITH marked AS (
  UPDATE workers SET stopped_at = now(), exit = $3
   WHERE worker_id = coalesce(
           (SELECT worker_id FROM workers WHERE worker_id = $4::text AND host = $1 AND pid = $2),
           (SELECT worker_id FROM workers WHERE $4::text IS NULL AND host = $1 AND pid = $2 AND stopped_at IS NULL
             ORDER BY started_at DESC LIMIT 1))
     AND stopped_at IS NULL
  RETURNING worker_id
), ended AS (
  UPDATE jobs SET lease_expires_at = now()
   WHERE worker_id = $4::text AND status = 'running' AND lease_expires_at > now()
     AND EXISTS (SELECT 1 FROM workers WHERE worker_id = $4::text AND host = $1 AND pid = $2)
  RETURNING job_id
)
SELECT (SELECT worker_id FROM marked) AS worker_id, (SELECT count(*) FROM ended)::int AS leases_ended`,
};

/**
 * jobTypesRegister — a starting worker registers the job types its handlers module runs
 * (lib/job-types.ts): each one's description, payload schema and time limit, as the
 * starting worker's module has them now (the latest start wins: a rolling deploy moves
 * every type to the new definition).
 * Params: $1 JSON array of {name, description, payloadSchema, timeoutMs, maxAttempts}.
 */
export const jobTypesRegister: Statement = {
  name: 'leasehold_job_types_register',
  text: `
INSERT INTO job_types (name, description, payload_schema, timeout_ms, max_attempts)
SELECT t.name, t.description, t."payloadSchema", t."timeoutMs", t."maxAttempts"
  FROM jsonb_to_recordset($1::jsonb) AS t(name text, description text, "payloadSchema" jsonb, "timeoutMs" int, "maxAttempts" int)
ON CONFLICT (name) DO UPDATE
   SET description = EXCLUDED.description, payload_schema = EXCLUDED.payload_schema,
       timeout_ms = EXCLUDED.timeout_ms, max_attempts = EXCLUDED.max_attempts, seen_at = now()`,
};

/** jobTypesList — the registered job types, by name. */
export const jobTypesList: Statement = {
  name: 'leasehold_job_types_list',
  text: `SELECT name, description, payload_schema, timeout_ms, max_attempts, registered_at, seen_at FROM job_types ORDER BY name`,
};
