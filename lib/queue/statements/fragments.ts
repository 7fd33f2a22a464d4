import { DEFAULT_MAX_ATTEMPTS } from '../job';

export interface Statement {
  /** The node-postgres prepared-statement name. */
  readonly name: string;
  readonly text: string;
}

export const ms = (param: string) => `(${param}::int * interval '1 millisecond')`;
/**
 * This row's value in `param`, a JSON object keyed by job id ({"42": 3, …}): a keyed
 * lookup per row (jsonb keeps an object's keys sorted and binary-searches them). The
 * array position it replaced was a linear search per row, so a batch of n writes cost n²/2
 * comparisons: a fifth of the database's time while draining in batches of 500.
 * The parameter's type is taken from the cast (jsonb), so it is parsed once, when bound;
 * cast from an explicit text it would be parsed again for every row in a generic plan
 * (plans.db.test.ts checks the real generic plans).
 */
export const at = (param: string, type: string) => `(${param}::jsonb ->> jobs.job_id::text)::${type}`;

/**
 * The job is as the caller's selection saw it: `param` is a JSON object keyed by job id
 * ({"42": "failed:2"}: status and attempt_count when the selection was made — a filter
 * resolved, a preview shown); a job it does not name, or a NULL, has no expectation. An
 * action acts on what was selected: a job that changed meanwhile (requeued, claimed,
 * finished again) is left alone, even when the new state would allow the action too
 * ("delete failed" must not delete the job a worker has since completed).
 */
export const asSeen = (param: string) => `coalesce(${at(param, 'text')} = jobs.status::text || ':' || jobs.attempt_count, true)`;

/** The columns every job-returning statement hands back, in the shape job.ts toJob() maps. */
export const JOB_COLUMNS = `job_id, queue, type, status, payload, attempt_count, max_attempts, attempt_budget,
  worker_id, heartbeat_at, lease_expires_at, run_at, priority, cancel_requested_at, idempotency_key,
  singleton_key, result_key, error, checkpoints, lease_lost_streak, created_at, started_at, finished_at`;
export const jobColumns = (alias: string) =>
  JOB_COLUMNS.split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');

/**
 * A job's attempts when its producer gave none (`given` NULL): its type's, as the type's
 * handlers module declared them (job_types.max_attempts, registered by the workers that run
 * it), else DEFAULT_MAX_ATTEMPTS. Read here, by the insert, so every producer on every host
 * (API, client, CLI, schedules) follows the registration of the moment without a copy of it.
 */
export const attemptsFor = (given: string, type: string) =>
  `coalesce(${given}, (SELECT jt.max_attempts FROM job_types jt WHERE jt.name = ${type}), ${DEFAULT_MAX_ATTEMPTS})`;

/**
 * Why a worker stopped renewing, for a lost lease's error: how its process ended when its
 * supervisor saw it die (workers.exit: "killed by SIGKILL"), else the possible causes.
 */
export const whyStopped = (workerIdExpr: string) =>
  `coalesce((SELECT w.exit FROM workers w WHERE w.worker_id = ${workerIdExpr}), 'crash, stall or partition')`;
