import { levelByLevel, SWEPT_AGO_MS_SQL } from '../job';
import { ms, type Statement } from './fragments';

/**
 * queueControlsRead — the controls of the given queues (those without a row have none),
 * with the running jobs of each and the rate bucket as of now (database clock).
 * Params: $1 queue[] (NULL = every controlled queue).
 */
export const queueControlsRead: Statement = {
  name: 'leasehold_queue_controls_read',
  text: `
SELECT q.name, q.paused_at, q.concurrency_limit, q.rate_limit, q.rate_period_ms, q.updated_at,
       CASE WHEN q.rate_limit IS NULL THEN NULL
            ELSE least(q.rate_limit::float8, coalesce(q.rate_tokens, q.rate_limit)
                 + extract(epoch FROM now() - coalesce(q.rate_updated_at, now())) * 1000 / q.rate_period_ms * q.rate_limit)
       END AS tokens,
       (SELECT count(*) FROM jobs j WHERE j.queue = q.name AND j.status = 'running')::int AS running
  FROM queues q
 WHERE $1::text[] IS NULL OR q.name = ANY($1::text[])
 ORDER BY q.name`,
};

/**
 * queueControlsSet — pause/resume and set or clear the limits of a queue (the row holds only
 * what is set; a queue with nothing set has no row, so its claims take the fast path).
 * Params: $1 name, $2 paused (NULL = keep), $3 concurrency_limit (NULL = keep, 0 = clear),
 *         $4 rate_limit (NULL = keep, 0 = clear), $5 rate_period_ms.
 */
export const queueControlsSet: Statement = {
  name: 'leasehold_queue_controls_set',
  text: `
WITH upsert AS (
  INSERT INTO queues AS q (name, paused_at, concurrency_limit, rate_limit, rate_period_ms, rate_tokens, rate_updated_at)
  VALUES ($1,
          CASE WHEN $2::boolean THEN now() END,
          nullif($3::int, 0),
          nullif($4::int, 0),
          CASE WHEN coalesce($4::int, 0) > 0 THEN $5::int END,
          nullif($4::int, 0), CASE WHEN coalesce($4::int, 0) > 0 THEN now() END)
  ON CONFLICT (name) DO UPDATE SET
    paused_at = CASE WHEN $2::boolean IS NULL THEN q.paused_at WHEN $2::boolean THEN coalesce(q.paused_at, now()) END,
    concurrency_limit = CASE WHEN $3::int IS NULL THEN q.concurrency_limit ELSE nullif($3::int, 0) END,
    rate_limit = CASE WHEN $4::int IS NULL THEN q.rate_limit ELSE nullif($4::int, 0) END,
    rate_period_ms = CASE WHEN $4::int IS NULL THEN q.rate_period_ms WHEN $4::int = 0 THEN NULL ELSE $5::int END,
    rate_tokens = CASE WHEN $4::int IS NULL THEN q.rate_tokens WHEN $4::int = 0 THEN NULL ELSE least(coalesce(q.rate_tokens, $4::int), $4::int) END,
    rate_updated_at = CASE WHEN $4::int IS NULL THEN q.rate_updated_at WHEN $4::int = 0 THEN NULL ELSE coalesce(q.rate_updated_at, now()) END,
    updated_at = now()
  RETURNING *
)
SELECT * FROM upsert`,
};

/** queueControlsPrune — drop a queue's row once nothing is set (its claims return to the fast path). Params: $1 name. */
export const queueControlsPrune: Statement = {
  name: 'leasehold_queue_controls_prune',
  text: `DELETE FROM queues WHERE name = $1 AND paused_at IS NULL AND concurrency_limit IS NULL AND rate_limit IS NULL`,
};

/** Workers that reported within `aliveParam` ms (database clock) and have not stopped: the live ones. */
const liveWorker = (aliveParam: string) => `stopped_at IS NULL AND heartbeat_at > now() - ${ms(aliveParam)}`;
/** The live workers serving queue `queueParam` (a quiet one serves none). */
const liveWorkersOn = (queueParam: string, aliveParam: string) => `${liveWorker(aliveParam)} AND quiet_at IS NULL AND ${queueParam} = ANY(queues)`;

/**
 * queueInUse — whether anything names queue $1: a job waiting in it (jobs_claim_idx), a live
 * worker serving it (the worker of any job running in it among them), or a schedule that
 * enqueues into it. Read-only; the CLI asks after a pause or resume, to say when the name
 * matches nothing (a typo pauses a queue no one uses, and the queue meant keeps running).
 * Params: $1 queue, $2 alive-within ms.
 */
export const queueInUse: Statement = {
  name: 'leasehold_queue_in_use',
  text: `
SELECT EXISTS (SELECT 1 FROM jobs WHERE queue = $1 AND status IN ('queued', 'retrying'))
    OR EXISTS (SELECT 1 FROM workers WHERE ${liveWorker('$2')} AND $1 = ANY(queues))
    OR EXISTS (SELECT 1 FROM schedules WHERE queue = $1) AS in_use`,
};

/**
 * queueHandledTypes — what the live workers serving a queue can run: `types`, the union of
 * their handled types, or NULL for any type — when one of them recorded none (a process of
 * an earlier version, which claims any type) or none is live (no one to ask: a ring waits in
 * the list for whoever starts). Params: $1 queue, $2 alive within (ms).
 */
export const queueHandledTypes: Statement = {
  name: 'leasehold_queue_handled_types',
  text: `
WITH live AS (
  SELECT types FROM workers WHERE ${liveWorkersOn('$1', '$2')}
)
SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM live) OR EXISTS (SELECT 1 FROM live WHERE types IS NULL) THEN NULL
            ELSE ARRAY(SELECT DISTINCT unnest(types) FROM live) END AS types`,
};

/**
 * queueWorkersForType — the live workers serving a queue, how many of them have a handler
 * for a type (a worker with no types recorded, of an earlier version, claims any), how many
 * live workers there are at all (each runs the recover sweep), how long ago the sweep last
 * ran (NULL: never recorded), whether the queue is paused, and whether it is controlled
 * (paused or limited: a row in queues, which the claims that take over an expired lease
 * leave to the sweep). Read-only: why a job waits, or who will move an expired lease on.
 * Params: $1 queue, $2 type, $3 alive within (ms).
 */
export const queueWorkersForType: Statement = {
  name: 'leasehold_queue_workers_for_type',
  text: `
SELECT count(*) FILTER (WHERE $1 = ANY(queues) AND quiet_at IS NULL)::int AS on_queue,
       count(*) FILTER (WHERE $1 = ANY(queues) AND quiet_at IS NULL AND (types IS NULL OR $2 = ANY(types)))::int AS with_handler,
       count(*)::int AS anywhere,
       ${SWEPT_AGO_MS_SQL} AS swept_ago_ms,
       EXISTS (SELECT 1 FROM queues WHERE name = $1 AND paused_at IS NOT NULL) AS paused,
       EXISTS (SELECT 1 FROM queues WHERE name = $1) AS controlled
  FROM workers
 WHERE ${liveWorker('$3')}`,
};

/**
 * jobsAhead — how many due jobs of a queue claims take before this one (read-only, for the
 * job page of a due waiting job): those of a higher priority (a lower number), then those of
 * its own level due before it (run_at, then job_id, as claims order them; compared with the
 * row's own run_at, to the microsecond). Claimable as claims see it: attempts left; with
 * types (those the queue's live workers have handlers for, queueHandledTypes), only jobs of
 * those types, one range of jobs_claim_type_idx per level and type — jobs no live worker can
 * run are not ahead of anything. The levels are read in order (levelByLevel) and the count
 * stops at $2 in all: a page that refreshes every two seconds reads at most $2 index entries.
 * Params: $1 job_id, $2 cap, and for jobsAheadOfTypes $3 the types (text[]).
 * Returns: higher, same_level, capped (the count stopped at $2: there are more).
 */
const aheadDue = `status IN ('queued', 'retrying') AND run_at <= now() AND attempt_count < max_attempts`;
const jobsAheadBy = (types?: string) => {
  const range = (level: string, extra: string) =>
    types
      ? `SELECT 1 FROM (SELECT DISTINCT unnest(${types}::text[]) AS type) t
          CROSS JOIN LATERAL (
            SELECT 1 FROM jobs
             WHERE queue = me.queue AND type = t.type AND priority = ${level} AND ${aheadDue}${extra}
             LIMIT $2) r`
      : `SELECT 1 FROM jobs WHERE queue = me.queue AND priority = ${level} AND ${aheadDue}${extra} LIMIT $2`;
  return `
WITH me AS (SELECT queue, priority, run_at, job_id FROM jobs WHERE job_id = $1::bigint),
ahead AS (
  SELECT a.same
    FROM me, LATERAL (${levelByLevel((k) => `SELECT false AS same FROM (${range(String(k), ` AND ${k} < me.priority`)}) h`)}
       UNION ALL
       SELECT true FROM (${range('me.priority', ' AND (run_at, job_id) < (me.run_at, me.job_id)')}) s
       LIMIT $2) a
)
SELECT (count(*) FILTER (WHERE NOT same))::int AS higher, (count(*) FILTER (WHERE same))::int AS same_level, count(*) >= $2 AS capped
  FROM ahead`;
};
export const jobsAhead: Statement = { name: 'leasehold_jobs_ahead', text: jobsAheadBy() };
/** jobsAhead of the given types ($3): those the queue's live workers have handlers for. */
export const jobsAheadOfTypes: Statement = { name: 'leasehold_jobs_ahead_of_types', text: jobsAheadBy('$3') };

/** The Postgres-only doorbell: wakes LISTENing workers (used when Redis is unreachable). */
export const wakeupNotify: Statement = {
  name: 'leasehold_wakeup_notify',
  text: `SELECT pg_notify('leasehold_wakeup', q) FROM unnest($1::text[]) AS q`,
};
