import { LEVELS_SQL, levelByLevel, SUSPECT_STREAK } from '../job';
import { ms, type Statement, whyStopped } from './fragments';

/**
 * The claim's swap, shared by every claim. `target` is a locked set of rows that passed
 * the claim's compare; the previous attempt of a job whose expired lease is taken over is
 * recorded as lease_lost in the same statement. `clock`: the database's time the lease
 * counts from (see claimControlled for why not always now()).
 */
const claimSwap = (workerParam: string, leaseParam: string, extraCtes = '', clock = 'now()') => `
, claimed AS (
  UPDATE jobs j
     SET status = 'running', worker_id = ${workerParam}, attempt_count = j.attempt_count + 1,
         heartbeat_at = ${clock}, lease_expires_at = ${clock} + ${ms(leaseParam)}, started_at = ${clock},
         lease_lost_streak = j.lease_lost_streak + CASE WHEN target.old_status = 'running' THEN 1 ELSE 0 END
    FROM target
   WHERE j.job_id = target.job_id
     -- At most one suspect per claim: a worker never holds two jobs that may crash it.
     AND (NOT target.suspect OR target.job_id = (SELECT min(t2.job_id) FROM target t2 WHERE t2.suspect))
  RETURNING j.job_id, j.queue, j.type, j.payload, j.attempt_count, j.max_attempts, j.attempt_budget, j.worker_id, j.checkpoints, j.lease_lost_streak, j.priority,
            extract(epoch FROM ${clock} - j.run_at) * 1000 AS waited_ms, target.old_status, target.old_worker_id, target.old_started_at, target.old_heartbeat_at
), lost AS (
  INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, heartbeat_at, finished_at, outcome, error)
  SELECT job_id, attempt_count - 1, old_worker_id, old_started_at, old_heartbeat_at, ${clock}, 'lease_lost',
         'lease expired: the worker stopped renewing (' || ${whyStopped('old_worker_id')} || '); taken over by a new claim'
    FROM claimed WHERE old_status = 'running'
)${extraCtes}
SELECT job_id, queue, type, payload, attempt_count, max_attempts, attempt_budget, worker_id, checkpoints, lease_lost_streak, priority, waited_ms,
       old_status = 'running' AS taken_over
  FROM claimed ORDER BY job_id`;

/**
 * A suspect: a job that lost its lease twice in a row, counting a takeover of its expired
 * lease happening now (lease_lost_streak + 1). One loss is what a host crash, a stall or a
 * partition does to every job in hand, innocent or not, and those jobs are taken over in
 * parallel. A second loss in a row makes the job a likely poison (what Sidekiq's
 * super_fetch also counts): a worker holds at most one such job at a time, so it takes no
 * second suspect down with it.
 */
const streakAfterClaim = `lease_lost_streak + CASE WHEN status = 'running' THEN 1 ELSE 0 END`;
const claimTargetColumns = `job_id, status AS old_status, worker_id AS old_worker_id,
         started_at AS old_started_at, heartbeat_at AS old_heartbeat_at,
         (${streakAfterClaim} >= ${SUSPECT_STREAK}) AS suspect`;

/** The claim's filter for suspects: none unless `allowParam`, then (in claimSwap) at most one. */
const suspects = (allowParam: string) => `(${allowParam}::boolean OR ${streakAfterClaim} < ${SUSPECT_STREAK})`;

/**
 * The fast claim paths leave controlled queues (paused or limited: they have a row in
 * `queues`) alone; those are claimed only by jobClaimControlled, under the queue's lock.
 * Claims by id ask per row. A claim from one queue asks once, of the queue parameter
 * (`queueParam`): asked per row, the planner turns the test into an anti-join it expects
 * to keep one row, and so fetches and sorts a queue's whole due backlog for every claim
 * instead of reading the first rows in index order (a claim of 10 took 134-141 ms against
 * 1.3-1.4 ms at 300,000 due jobs; lib/queue/plans.db.test.ts checks the plan).
 */
const uncontrolled = (queueParam?: string) =>
  queueParam ? `NOT EXISTS (SELECT 1 FROM queues WHERE name = ${queueParam})` : `NOT EXISTS (SELECT 1 FROM queues q WHERE q.name = jobs.queue)`;

/**
 * A claim takes only the types its worker has a handler for (`typesParam`, NULL = any): a
 * job of a type this process cannot run waits for a worker that can (a rolling deploy, or
 * fleets with different handlers on one queue) instead of failing here for want of code.
 */
const handled = (typesParam: string) => `(${typesParam}::text[] IS NULL OR type = ANY(${typesParam}::text[]))`;

/**
 * jobClaim — claim specific jobs (the ids a doorbell pop returned) and take a lease.
 * Params: $1 job_id[], $2 worker_id, $3 lease_ms, $4 allow a suspect (boolean), $5 handled
 *         types (text[], NULL = any).
 * Compare: a handled type, attempts left, no cancel requested, and either due (queued/retrying with
 *          run_at <= now()) or running with an expired lease (a takeover). Rows locked by
 *          another transaction are skipped: only one claimer can win a row. Suspects only
 *          when $4, and then at most one.
 * Returns: what a handler needs of each claimed job (attempt_count is the new fencing
 *          token). A missing id was refused: already claimed, not due, finished,
 *          cancelled, or out of attempts.
 */
export const jobClaim: Statement = {
  name: 'leasehold_job_claim',
  text: `
WITH target AS (
  SELECT ${claimTargetColumns}
    FROM jobs
   WHERE job_id = ANY($1::bigint[])
     AND attempt_count < max_attempts
     AND cancel_requested_at IS NULL
     AND ((status IN ('queued', 'retrying') AND run_at <= now())
          OR (status = 'running' AND lease_expires_at < now()))
     AND ${suspects('$4')}
     AND ${handled('$5')}
     AND ${uncontrolled()}
   ORDER BY job_id
     FOR UPDATE SKIP LOCKED
)${claimSwap('$2', '$3')}`,
};

/**
 * jobClaimFresh — the common case of jobClaim, cheaper: ids of due jobs that are nobody's
 * suspect, claimed with one plain UPDATE (no separate row-lock pass, so a row is written
 * once). A row another transaction holds is waited for and re-checked, then refused if it
 * changed (ids come from one pop each, so that wait is rare and short). Whatever it
 * refuses — takeovers of expired leases, suspects, already claimed ids — jobClaim re-checks.
 * Params: $1 job_id[], $2 worker_id, $3 lease_ms, $4 handled types (text[], NULL = any).
 * Compare: queued/retrying, due, attempts left, no cancel request, not a suspect, a
 *          handled type, queue not controlled.
 * Returns: the claimed jobs, as jobClaim.
 */
export const jobClaimFresh: Statement = {
  name: 'leasehold_job_claim_fresh',
  text: `
UPDATE jobs
   SET status = 'running', worker_id = $2, attempt_count = attempt_count + 1,
       heartbeat_at = now(), lease_expires_at = now() + ${ms('$3')}, started_at = now()
 WHERE job_id = ANY($1::bigint[])
   AND status IN ('queued', 'retrying')
   AND run_at <= now()
   AND attempt_count < max_attempts
   AND cancel_requested_at IS NULL
   AND lease_lost_streak < ${SUSPECT_STREAK}
   AND ${handled('$4')}
   AND ${uncontrolled()}
RETURNING job_id, queue, type, payload, attempt_count, max_attempts, attempt_budget, worker_id, checkpoints, lease_lost_streak, priority,
          extract(epoch FROM now() - run_at) * 1000 AS waited_ms`,
};

/**
 * The due jobs of queue `queue` a claim takes, by priority and oldest first, locked. Rows
 * another claimer holds are skipped, and LIMIT counts only the rows locked (a plain subquery
 * cannot update more rows than it locked).
 * - Of any type: one locked range per level, level after level (levelByLevel), so a claim
 *   walks past whatever a racing claimer holds, within a level and into the next, and the
 *   levels after the one that fills it are never read.
 * - With `types` (every claim a worker makes): the candidates are read one level and type at
 *   a time (LEVELS_SQL, from jobs_claim_type_idx: a filter on jobs_claim_idx would read past
 *   every due job of another type first — a queue holding a million jobs no live worker has
 *   the handler for cost every claim 100-150 ms), merged in claim order, and only then
 *   locked, as many as the claim takes: locking inside each range locked up to ranges × limit
 *   rows, which claimers racing on the queue then skipped and came back empty (a review: 200
 *   rows locked for 10 claimed, with 20 types). Twice the limit and ten more are read as
 *   candidates: a claim fills while racing claimers hold fewer than limit + 10 of them, and
 *   comes back short (the next poll, or a ring, tries again) when they hold more — as before
 *   priorities, when there was one range. Not levelByLevel: see job.ts.
 */
const dueTarget = (o: { queue: string; limit: string; allowSuspect: string; types?: string; where?: string; clock?: string }) => {
  const due = dueOf(o);
  if (o.types) return dueOfTypes({ queues: [o.queue], limit: o.limit, types: o.types }, due);
  return `
  ${levelByLevel(
    (level) => `
  SELECT ${claimTargetColumns}
    FROM jobs
   WHERE queue = ${o.queue} AND priority = ${level}
     AND ${due}
   ORDER BY run_at, job_id
   LIMIT ${o.limit}
     FOR UPDATE SKIP LOCKED`,
  )}
  LIMIT ${o.limit}`;
};

/** Claimable now: waiting, due (by `clock`), attempts left, a suspect only when allowed, and `where`. */
const dueOf = (o: { allowSuspect: string; where?: string; clock?: string }) => `status IN ('queued', 'retrying')
       AND run_at <= ${o.clock ?? 'now()'}
       AND attempt_count < max_attempts
       AND ${suspects(o.allowSuspect)}${o.where ? `
       AND ${o.where}` : ''}`;

/**
 * dueTarget's claim of handled types, from one queue, or from several (`queues`: their
 * params in the order a level's queues are taken — the Redis pop's, rotated by the caller).
 * The candidates are read per queue, level and type, merged by priority, then the queues'
 * order, then due time. Each queue is its own arm with its own param: joined to a list of
 * queues instead, a custom plan cannot see which queue holds a backlog, and for a claim of
 * 500 it read each range whole and sorted it (30,000 rows for each of a backlog's ranges).
 * The candidates' ids are an array, looked up by primary key: as a join (or a semi-join), the
 * planner could read the queue's whole due range from jobs_claim_idx for the few ids among it
 * (a generic plan did at any size, a custom one for a claim of 490 in a queue of 20,000 jobs of
 * another type). The due conditions (`recheck`, by default the candidates' `due`) are tested
 * again on each row locked: a candidate read in the snapshot may have been claimed since
 * (FOR UPDATE re-checks the WHERE on the row's latest version).
 */
const dueOfTypes = (o: { queues: readonly string[]; limit: string; types: string; skipControlled?: boolean }, due: string, recheck = due) => {
  const candidates = `(${o.limit}) * 2 + 10`;
  const arm = (queue: string, k: number) => `
           SELECT ${k} AS k, c.job_id, c.priority, c.run_at
             FROM ${LEVELS_SQL}
            CROSS JOIN (SELECT DISTINCT unnest(${o.types}::text[]) AS type) t
            CROSS JOIN LATERAL (
              SELECT job_id, priority, run_at
                FROM jobs
               WHERE queue = ${queue} AND type = t.type AND priority = l.level
                 AND ${due}
               ORDER BY run_at, job_id
               LIMIT ${candidates}
            ) c${o.skipControlled ? `
            WHERE ${uncontrolled(queue)}` : ''}`;
  const several = o.queues.length > 1;
  return `
  SELECT ${claimTargetColumns}
    FROM jobs
   WHERE job_id = ANY (ARRAY(
           SELECT c.job_id
             FROM (${o.queues.map(arm).join(`
            UNION ALL`)}
           ) c
            ORDER BY c.priority, ${several ? 'c.k, ' : ''}c.run_at, c.job_id
            LIMIT ${candidates}))
     AND ${several ? `queue IN (${o.queues.join(', ')})` : `queue = ${o.queues[0]}`}
     AND ${recheck}
   ORDER BY priority, ${several ? `array_position(ARRAY[${o.queues.join(', ')}]::text[], queue), ` : ''}run_at, job_id
   LIMIT ${o.limit}
     FOR UPDATE SKIP LOCKED`;
};

/**
 * jobClaimNext — claim the due jobs of one queue, of any type, by priority and oldest first
 * (the library's claim for one queue; a worker's claims are jobClaimNextAcross).
 * Params: $1 queue, $2 worker_id, $3 lease_ms, $4 limit, $5 allow a suspect (boolean).
 * Compare: queued/retrying, due, attempts left, queue not controlled; suspects only when $5,
 *          at most one. (Expired leases: jobClaimExpired and jobRecover.)
 * Returns: the claimed rows.
 */
export const jobClaimNext: Statement = {
  name: 'leasehold_job_claim_next',
  text: `
WITH target AS (${dueTarget({ queue: '$1', limit: '$4', allowSuspect: '$5', where: uncontrolled('$1') })}
)${claimSwap('$2', '$3')}`,
};

/**
 * jobClaimNextOfTypes — jobClaimNext for the given types only (a worker's claims are
 * jobClaimNextAcross, which reads the same ranges for each of its queues).
 * Params: as jobClaimNext, and $6 the types (text[]).
 */
export const jobClaimNextOfTypes: Statement = {
  name: 'leasehold_job_claim_next_of_types',
  text: `
WITH target AS (${dueTarget({ queue: '$1', limit: '$4', allowSuspect: '$5', types: '$6', where: uncontrolled('$1') })}
)${claimSwap('$2', '$3')}`,
};

/**
 * jobClaimNextAcross(n) — what a worker's claim from PostgreSQL takes from the n queues it
 * serves (the backstop poll, and every claim while Redis is away): the due jobs of its handled
 * types, by priority across the queues, then queue by queue in the order given (the Redis
 * pop's, rotated by the caller, so one busy queue cannot starve the others within a level),
 * then oldest first. Controlled queues are left out (jobClaimControlled claims them). One
 * statement per number of queues (each queue is its own arm: see dueOfTypes).
 * Params: $1 worker_id, $2 lease_ms, $3 limit, $4 allow a suspect (boolean), $5 the types
 *         (text[]), $6… the queues, in that order.
 * Compare: as jobClaimNext, on each row (its queue not controlled, re-checked on the locked row).
 * Returns: the claimed rows.
 */
const claimsAcross = new Map<number, Statement>();
export function jobClaimNextAcross(queues: number): Statement {
  let st = claimsAcross.get(queues);
  if (!st) {
    const params = Array.from({ length: queues }, (_, k) => `$${6 + k}::text`);
    const due = dueOf({ allowSuspect: '$4' });
    const target = dueOfTypes({ queues: params, limit: '$3', types: '$5', skipControlled: true }, due, `${due}
       AND ${uncontrolled()}`);
    st = { name: `leasehold_job_claim_next_across_${queues}`, text: `
WITH target AS (${target}
)${claimSwap('$1', '$2')}` };
    claimsAcross.set(queues, st);
  }
  return st;
}

/**
 * jobClaimExpired — take over running jobs of a queue whose lease expired, oldest expiry
 * first: the polling worker's own recovery, so a takeover never depends on the sweep
 * alone. Jobs out of attempts or with a cancel request are left to jobRecover (which
 * fails or cancels them).
 * Params: $1 queue, $2 worker_id, $3 lease_ms, $4 limit, $5 allow a suspect (boolean),
 *         $6 handled types (text[], NULL = any).
 * Returns: the claimed rows (suspects only when $5, at most one); the lost attempts are
 *          recorded as `lease_lost`.
 */
export const jobClaimExpired: Statement = {
  name: 'leasehold_job_claim_expired',
  text: `
WITH target AS (
  SELECT ${claimTargetColumns}
    FROM jobs
   WHERE queue = $1
     AND status = 'running'
     AND lease_expires_at < now()
     AND attempt_count < max_attempts
     AND cancel_requested_at IS NULL
     AND ${suspects('$5')}
     AND ${handled('$6')}
     AND ${uncontrolled('$1')}
   ORDER BY lease_expires_at
   LIMIT $4
     FOR UPDATE SKIP LOCKED
)${claimSwap('$2', '$3')}`,
};

/** Takes a controlled queue's lock for this transaction (claims of that queue serialise on it). */
export const queueLock: Statement = {
  name: 'leasehold_queue_lock',
  text: `SELECT name FROM queues WHERE name = $1 FOR UPDATE`,
};

/**
 * jobClaimControlled — claim due jobs of a paused or limited queue, within its limits.
 * Run after queueLock in the same transaction: this statement's snapshot is taken after
 * the lock, so it counts every running job other claimers committed before it.
 * Params: $1 queue, $2 worker_id, $3 lease_ms, $4 most wanted, $5 allow a suspect.
 * Compare: as jobClaimNext; nothing while paused; at most concurrency_limit − running, and
 *          at most the whole tokens in the rate bucket (refilled at rate_limit per
 *          rate_period_ms of the database clock, capped at rate_limit).
 * Swap: as jobClaimNext, and the bucket loses one token per claimed job.
 * Returns: the claimed rows. A queue with no row (no longer controlled) claims nothing here.
 * Its time is statement_timestamp(), not now(): now() is when the transaction began, before
 * queueLock waited for the lock — behind a claimer that held it long, a lease counted from
 * then would start partly or wholly spent (and the worker let the job go at once), and the
 * rate bucket's clock would move back, refilling a period twice.
 */
const CONTROLLED_CLOCK = 'statement_timestamp()';
const claimControlled = (types?: string) => `
WITH q AS (
  SELECT concurrency_limit,
         CASE WHEN rate_limit IS NULL THEN NULL
              ELSE least(rate_limit::float8,
                         coalesce(rate_tokens, rate_limit)
                           + extract(epoch FROM ${CONTROLLED_CLOCK} - coalesce(rate_updated_at, ${CONTROLLED_CLOCK})) * 1000 / rate_period_ms * rate_limit)
         END AS tokens
    FROM queues
   WHERE name = $1 AND paused_at IS NULL
), allowance AS (
  SELECT greatest(0, least($4::int,
           coalesce(q.concurrency_limit - (SELECT count(*) FROM jobs WHERE queue = $1 AND status = 'running')::int, $4::int),
           coalesce(floor(q.tokens)::int, $4::int))) AS n
    FROM q
), target AS (${dueTarget({ queue: '$1', limit: 'coalesce((SELECT n FROM allowance), 0)', allowSuspect: '$5', types, clock: CONTROLLED_CLOCK })}
)${claimSwap('$2', '$3', `, bucket AS (
  UPDATE queues
     SET rate_tokens = (SELECT tokens FROM q) - (SELECT count(*) FROM claimed), rate_updated_at = ${CONTROLLED_CLOCK}
   -- not while paused (q has no row): the bucket would be set to NULL, which reads as full
   WHERE name = $1 AND rate_limit IS NOT NULL AND EXISTS (SELECT 1 FROM q)
)`, CONTROLLED_CLOCK)}`;
export const jobClaimControlled: Statement = { name: 'leasehold_job_claim_controlled', text: claimControlled() };

/** jobClaimControlledOfTypes — jobClaimControlled for a worker's handled types only. Params: as it, and $6 the types (text[]). */
export const jobClaimControlledOfTypes: Statement = { name: 'leasehold_job_claim_controlled_of_types', text: claimControlled('$6') };
