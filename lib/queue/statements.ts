/**
 * Every SQL statement that writes job state, in one place.
 *
 * The state machine (see the README's Architecture section and ../shared/DESIGN.md §2):
 *
 *   queued ──claim──▶ running ──complete──▶ completed
 *   retrying ─claim─▶ running ──fail (attempts left)──▶ retrying (run_at = now() + backoff)
 *   running (lease expired) ──claim or recover──▶ running / retrying / failed / cancelled
 *   running ──fail (no attempts left, or permanent error)──▶ failed   (the dead letter)
 *   queued | retrying ──cancel──▶ cancelled;  running ──cancel──▶ cancel requested ──▶ cancelled
 *   running ──snooze (SnoozeError)──▶ queued (run_at = now() + delay, max_attempts + 1)
 *   failed | cancelled | completed | retrying ──operator requeue──▶ queued (a finished job
 *     only while its singleton key is free)
 *
 * Rules every statement here follows:
 *  - One statement per transition: the compare is in WHERE, the swap in SET, the new row
 *    in RETURNING. Zero rows means the transition was refused and nothing changed.
 *  - Row locks serialise competing writers: a second claimer re-evaluates WHERE against
 *    the committed row (or skips a locked one) and updates nothing.
 *  - Every write to a running job is fenced on worker_id AND attempt_count (the fencing
 *    token, which only ever grows) AND status = 'running'.
 *  - The database clock (now()) is the only clock. Durations (lease, backoff) are bound
 *    as milliseconds; no timestamp from a worker's clock is ever bound into lease SQL.
 *  - Batches are arrays, so one prepared statement serves one job or a thousand, and
 *    each row carries its own fence.
 *
 * Only lib/queue/ops.ts imports this file (a test enforces it); nothing else in the
 * repository writes the jobs or ended_attempts tables.
 */

import { DEFAULT_MAX_ATTEMPTS, holdsSingletonKey, LEVELS_SQL, levelByLevel, OWNER_GONE_SQL, quietTokenSql, SUSPECT_STREAK, singletonHolderSql, SWEPT_AGO_MS_SQL } from './job';

export interface Statement {
  /** The node-postgres prepared-statement name. */
  readonly name: string;
  readonly text: string;
}

const ms = (param: string) => `(${param}::int * interval '1 millisecond')`;
/** A duration that may pass 24.8 days (an int of milliseconds): retention windows. */
const msLong = (param: string) => `(${param}::bigint * interval '1 millisecond')`;

/**
 * This row's value in `param`, a JSON object keyed by job id ({"42": 3, …}): a keyed
 * lookup per row (jsonb keeps an object's keys sorted and binary-searches them). The
 * array position it replaced was a linear search per row, so a batch of n writes cost n²/2
 * comparisons: a fifth of the database's time while draining in batches of 500.
 * The parameter's type is taken from the cast (jsonb), so it is parsed once, when bound;
 * cast from an explicit text it would be parsed again for every row in a generic plan
 * (plans.db.test.ts checks the real generic plans).
 */
const at = (param: string, type: string) => `(${param}::jsonb ->> jobs.job_id::text)::${type}`;

/**
 * The job is as the caller's selection saw it: `param` is a JSON object keyed by job id
 * ({"42": "failed:2"}: status and attempt_count when the selection was made — a filter
 * resolved, a preview shown); a job it does not name, or a NULL, has no expectation. An
 * action acts on what was selected: a job that changed meanwhile (requeued, claimed,
 * finished again) is left alone, even when the new state would allow the action too
 * ("delete failed" must not delete the job a worker has since completed).
 */
const asSeen = (param: string) => `coalesce(${at(param, 'text')} = jobs.status::text || ':' || jobs.attempt_count, true)`;

/** The columns every job-returning statement hands back, in the shape ops.toJob() maps. */
const JOB_COLUMNS = `job_id, queue, type, status, payload, attempt_count, max_attempts, attempt_budget,
  worker_id, heartbeat_at, lease_expires_at, run_at, priority, cancel_requested_at, idempotency_key,
  singleton_key, result_key, error, checkpoints, lease_lost_streak, created_at, started_at, finished_at`;
const jobColumns = (alias: string) =>
  JOB_COLUMNS.split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');

/**
 * A job's attempts when its producer gave none (`given` NULL): its type's, as the type's
 * handlers module declared them (job_types.max_attempts, registered by the workers that run
 * it), else DEFAULT_MAX_ATTEMPTS. Read here, by the insert, so every producer on every host
 * (API, client, CLI, schedules) follows the registration of the moment without a copy of it.
 */
const attemptsFor = (given: string, type: string) =>
  `coalesce(${given}, (SELECT jt.max_attempts FROM job_types jt WHERE jt.name = ${type}), ${DEFAULT_MAX_ATTEMPTS})`;

/**
 * jobEnqueue — insert new jobs (one or many) as `queued`.
 * Params: $1 queue[], $2 type[], $3 payload (JSON text)[], $4 max_attempts[] (NULL: see attemptsFor),
 *         $5 run_at[] (NULL = now()), $6 idempotency_key[] (NULL = none), $7 priority[],
 *         $8 singleton_key[] (NULL = none).
 * A run_at in the past is stored as now(): such a job is due at once, and its wait (the
 * queue-wait metric, the overview's oldest due job) and its place in line count from its
 * enqueue, not from a date the producer chose.
 * Ids are drawn from the sequence before the insert so each input row learns its id.
 * Compare: a row whose idempotency key already exists, or whose singleton key an unfinished
 *          job holds (one of the same batch included: the first in the insert's key order), is
 *          not inserted (ON CONFLICT, on either unique index; the job id, drawn from the
 *          sequence, conflicts only with a sequence set back: ops.enqueue says so).
 * Returns: one row per input, in input order: ord, job_id (NULL when a key was taken),
 *          queue, priority, due (run_at <= now(): ring the doorbell now).
 */
export const jobEnqueue: Statement = {
  name: 'leasehold_job_enqueue',
  text: `
WITH input AS MATERIALIZED (
  SELECT nextval('jobs_job_id_seq'::regclass) AS job_id, t.queue, t.type, t.payload,
         ${attemptsFor('t.max_attempts', 't.type')} AS max_attempts, t.run_at, t.idempotency_key, t.priority, t.singleton_key, t.ord
    FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::text[], $7::smallint[], $8::text[])
         WITH ORDINALITY AS t(queue, type, payload, max_attempts, run_at, idempotency_key, priority, singleton_key, ord)
), ins AS (
  INSERT INTO jobs (job_id, queue, type, payload, max_attempts, attempt_budget, run_at, idempotency_key, priority, singleton_key)
  SELECT job_id, queue, type, payload::jsonb, max_attempts, max_attempts, GREATEST(run_at, now()), idempotency_key, priority, singleton_key
    -- in key order (byte order, as lib/client.ts sorts the chunks of a larger batch): two
    -- batches sharing keys in different orders would each wait for a key the other holds (a
    -- deadlock); ids were drawn in input order above, so they keep it. (Batches that share
    -- both kinds of key, paired differently, can still deadlock: PostgreSQL then fails one.)
    FROM input ORDER BY idempotency_key COLLATE "C" NULLS LAST, singleton_key COLLATE "C" NULLS LAST, ord
  ON CONFLICT DO NOTHING
  RETURNING job_id, run_at <= now() AS due
)
SELECT input.ord, ins.job_id, input.queue, input.priority, coalesce(ins.due, false) AS due
  FROM input LEFT JOIN ins USING (job_id)
 ORDER BY input.ord`,
};

/**
 * jobEnqueueOne — jobEnqueue for a single job: a plain INSERT, the cheapest statement for
 * the commonest call (a producer enqueuing one job and waiting for its 202).
 * Params: $1 queue, $2 type, $3 payload (JSON text), $4 max_attempts, $5 run_at (NULL or
 *         past = now(), as in jobEnqueue), $6 idempotency_key (NULL = none), $7 priority,
 *         $8 singleton_key (NULL = none).
 * Returns: job_id, queue, priority, due — or no row when a key was taken (as jobEnqueue).
 */
export const jobEnqueueOne: Statement = {
  name: 'leasehold_job_enqueue_one',
  text: `
INSERT INTO jobs (queue, type, payload, max_attempts, attempt_budget, run_at, idempotency_key, priority, singleton_key)
SELECT $1, $2, $3::jsonb, a.n, a.n, GREATEST($5::timestamptz, now()), $6, $7, $8
  FROM (SELECT ${attemptsFor('$4::int', '$2::text')} AS n) a
ON CONFLICT DO NOTHING
RETURNING job_id, queue, priority, run_at <= now() AS due`,
};

/**
 * jobIdsByIdempotencyKey — the ids of existing jobs for keys that conflicted on enqueue.
 * Read-only; a separate statement so it sees rows committed by concurrent enqueuers.
 * Params: $1 idempotency_key[].
 */
export const jobIdsByIdempotencyKey: Statement = {
  name: 'leasehold_job_ids_by_idempotency_key',
  text: `SELECT idempotency_key, job_id, queue FROM jobs WHERE idempotency_key = ANY($1::text[])`,
};

/**
 * jobIdsBySingletonKey — the unfinished (queued, retrying or running) jobs holding these
 * singleton keys: after an enqueue's conflict, for a requeue's preview, for a Run now.
 * Params: $1 singleton_key[].
 */
export const jobIdsBySingletonKey: Statement = {
  name: 'leasehold_job_ids_by_singleton_key',
  text: `SELECT singleton_key, job_id, queue FROM jobs WHERE singleton_key = ANY($1::text[]) AND ${holdsSingletonKey()}`,
};

/**
 * Why a worker stopped renewing, for a lost lease's error: how its process ended when its
 * supervisor saw it die (workers.exit: "killed by SIGKILL"), else the possible causes.
 */
const whyStopped = (workerIdExpr: string) =>
  `coalesce((SELECT w.exit FROM workers w WHERE w.worker_id = ${workerIdExpr}), 'crash, stall or partition')`;

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

/**
 * scheduleDue — schedules whose next tick is due, with the database clock: those whose
 * last tick went through first, then those failing, the one that failed longest ago first.
 * A failing schedule stays at its tick; by tick order alone, a hundred of them would fill
 * every batch and no other schedule would tick again.
 * Returns: name, cron, timezone, queue, type, payload, max_attempts, next_run_at, now.
 */
export const scheduleDue: Statement = {
  name: 'leasehold_schedule_due',
  text: `SELECT *, now() AS db_now FROM schedules WHERE enabled AND paused_at IS NULL AND next_run_at <= now()
          ORDER BY last_error_at NULLS FIRST, next_run_at LIMIT 100`,
};

/**
 * A schedule still at the tick a process read, compared to the millisecond: the tick comes
 * back as a JavaScript Date, so a next_run_at with microseconds (an operator's
 * `UPDATE schedules SET next_run_at = now()`) would never match, and the schedule would
 * never tick again.
 */
const tickIs = (param: string) => `date_trunc('milliseconds', next_run_at) = ${param}`;

/**
 * scheduleAdvance — move a schedule to its next tick, if it is still at the tick this
 * process saw (a compare-and-swap: of several processes, exactly one wins each tick).
 * Params: $1 name, $2 the tick seen (next_run_at), $3 the next tick, $4 the job enqueued,
 *         $5 skipped (overlap 'skip': a run was unfinished and no job was made; the last
 *         run and its job stay as they were, the tick is kept as last_skipped_at and the
 *         unfinished run, $4, as last_skipped_job_id).
 */
export const scheduleAdvance: Statement = {
  name: 'leasehold_schedule_advance',
  text: `
UPDATE schedules
   SET next_run_at = $3,
       last_run_at = CASE WHEN $5::boolean THEN last_run_at ELSE $2 END,
       last_job_id = CASE WHEN $5::boolean THEN last_job_id ELSE $4 END,
       last_skipped_at = CASE WHEN $5::boolean THEN $2 ELSE last_skipped_at END,
       last_skipped_job_id = CASE WHEN $5::boolean THEN $4 ELSE last_skipped_job_id END,
       last_error = NULL, last_error_at = NULL, updated_at = now()
 WHERE name = $1 AND ${tickIs('$2')} AND enabled AND paused_at IS NULL
RETURNING name`,
};

/**
 * scheduleTickFailed — record why a schedule's due tick could not be enqueued, if it is
 * still at that tick (a schedule redefined or advanced meanwhile keeps its own state).
 * Params: $1 name, $2 the tick tried (next_run_at), $3 the error text.
 */
export const scheduleTickFailed: Statement = {
  name: 'leasehold_schedule_tick_failed',
  text: `
UPDATE schedules
   SET last_error = $3, last_error_at = now()
 WHERE name = $1 AND ${tickIs('$2')}
RETURNING name`,
};

const scheduleInsert = `
INSERT INTO schedules AS s (name, cron, timezone, queue, type, payload, max_attempts, next_run_at, enabled, priority, overlap)
VALUES ($1, $2, $3, $4, $5, $6::jsonb, ${attemptsFor('$7::int', '$5::text')}, $8, coalesce($9::boolean, true), $10, coalesce($11::text, 'allow'))`;

/**
 * scheduleUpsert — define (or redefine) a schedule. Params: $1 name, $2 cron, $3 timezone,
 * $4 queue, $5 type, $6 payload (JSON), $7 max_attempts (NULL: the type's as the schedule is
 * defined, see attemptsFor), $8 first tick, $9 enabled (NULL: a new one is, a redefined one
 * keeps what it was: an edit from the console does not switch a disabled schedule on),
 * $10 priority, $11 overlap ('allow' or 'skip'; NULL: a new one allows, a redefined one keeps
 * what it was, as for $9).
 * A redefinition keeps next_run_at when the cron and timezone are unchanged, and never
 * touches paused_at: an operator's pause outlives the upsert every worker start makes.
 */
export const scheduleUpsert: Statement = {
  name: 'leasehold_schedule_upsert',
  text: `${scheduleInsert}
ON CONFLICT (name) DO UPDATE SET
  -- the tick it was waiting for stands, unless the cron, the zone, or a switch back on
  -- (the ticks while it was off are not owed) makes it start from the next one
  next_run_at = CASE WHEN s.cron = EXCLUDED.cron AND s.timezone = EXCLUDED.timezone AND (s.enabled OR NOT coalesce($9::boolean, s.enabled))
                     THEN s.next_run_at ELSE EXCLUDED.next_run_at END,
  cron = EXCLUDED.cron, timezone = EXCLUDED.timezone, queue = EXCLUDED.queue, type = EXCLUDED.type,
  payload = EXCLUDED.payload, max_attempts = EXCLUDED.max_attempts, enabled = coalesce($9::boolean, s.enabled), priority = EXCLUDED.priority,
  overlap = coalesce($11::text, s.overlap),
  -- a redefinition starts over: the error belonged to the definition it replaces
  last_error = NULL, last_error_at = NULL, updated_at = now()
RETURNING *`,
};

/** scheduleCreate — scheduleUpsert for a new name only: no row when one by that name exists. */
export const scheduleCreate: Statement = {
  name: 'leasehold_schedule_create',
  text: `${scheduleInsert}
ON CONFLICT (name) DO NOTHING
RETURNING *`,
};

/**
 * scheduleLock — lock a schedule's due tick for this transaction (SKIP LOCKED: another
 * process has it). Params: $1 name, $2 tick. Returns the row as locked: the tick's job is
 * built from it, not from the earlier read (a redefinition may have landed in between).
 */
export const scheduleLock: Statement = {
  name: 'leasehold_schedule_lock',
  text: `SELECT *, now() AS db_now FROM schedules WHERE name = $1 AND ${tickIs('$2')} AND enabled AND paused_at IS NULL FOR UPDATE SKIP LOCKED`,
};

/** The database clock. */
export const dbClock: Statement = { name: 'leasehold_db_clock', text: `SELECT now() AS now` };

export const scheduleDelete: Statement = {
  name: 'leasehold_schedule_delete',
  text: `DELETE FROM schedules WHERE name = $1 RETURNING name`,
};

export const scheduleList: Statement = {
  name: 'leasehold_schedule_list',
  text: `SELECT *, now() AS db_now FROM schedules ORDER BY name`,
};

/** scheduleGet — one schedule, and the database clock. Params: $1 name. */
export const scheduleGet: Statement = {
  name: 'leasehold_schedule_get',
  text: `SELECT *, now() AS db_now FROM schedules WHERE name = $1`,
};

/**
 * schedulePause — an operator's pause: no tick is enqueued until a resume. Waits for a tick
 * being enqueued (its row lock), so a pause that returns is one no later tick ignores.
 * Params: $1 name. Compare: not paused already. Zero rows: no such schedule, or paused.
 */
export const schedulePause: Statement = {
  name: 'leasehold_schedule_pause',
  text: `
UPDATE schedules SET paused_at = now(), updated_at = now()
 WHERE name = $1 AND paused_at IS NULL
RETURNING *, now() AS db_now`,
};

/**
 * scheduleResume — end a pause, from the next tick after now: the ticks while it was paused
 * are not owed (as for a schedule switched back on), so a resume never makes a burst of runs.
 * Params: $1 name, $2 the next tick (computed from the cron and the database clock by the
 * caller), $3 the cron and $4 the zone it was computed from. Compare: paused, and still that
 * cron and zone (a redefinition in between would be given another expression's tick).
 * The tick error is cleared: it was about a tick that is no longer owed.
 */
export const scheduleResume: Statement = {
  name: 'leasehold_schedule_resume',
  text: `
UPDATE schedules
   SET paused_at = NULL, next_run_at = $2, last_error = NULL, last_error_at = NULL, updated_at = now()
 WHERE name = $1 AND paused_at IS NOT NULL AND cron = $3 AND timezone = $4
RETURNING *, now() AS db_now`,
};

/**
 * scheduleRunLock — lock a schedule for an operator's "run now" (waiting for another run-now,
 * a pause or a tick that holds it), and read the database clock after the wait
 * (clock_timestamp(), not now(), the transaction's start: a run-now that waited for another
 * must not date itself before the one it waited for). The run-now that follows in the same
 * transaction takes a new snapshot, so it sees the job the one before it committed.
 * Params: $1 name.
 */
export const scheduleRunLock: Statement = {
  name: 'leasehold_schedule_run_lock',
  text: `SELECT name, clock_timestamp() AS at FROM schedules WHERE name = $1 FOR UPDATE`,
};

/**
 * scheduleRunNow — an operator's "run now": the job the schedule's ticks make, due now, with
 * the schedule's tick left where it is. Params: $1 name, $2 this run's idempotency key,
 * $3 the keys of run-nows close enough to be the same click (see ops.scheduleRunNow), $4 the
 * schedule's singleton key, which the job takes when the schedule skips overlapping runs.
 * Compare: no job holds one of those keys (and ON CONFLICT, for $2 itself, and for $4 held by
 *          an unfinished run).
 * Returns: job_id, queue, priority (the job is due at once) — or no row when a run-now just
 *          made its job, or a run of it is unfinished (overlap 'skip').
 */
export const scheduleRunNow: Statement = {
  name: 'leasehold_schedule_run_now',
  text: `
INSERT INTO jobs (queue, type, payload, max_attempts, attempt_budget, run_at, idempotency_key, priority, singleton_key)
SELECT s.queue, s.type, s.payload, s.max_attempts, s.max_attempts, now(), $2, s.priority,
       CASE WHEN s.overlap = 'skip' THEN $4::text END
  FROM schedules s
 WHERE s.name = $1
   AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.idempotency_key = ANY($3::text[]))
ON CONFLICT DO NOTHING
RETURNING job_id, queue, priority`,
};

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
 * stopped the handler: finish the job as `cancelled`.
 * Params: $1 job_id[], $2 {job_id: attempt}, $3 worker_id.
 * Compare: the fence, and a cancel was requested.
 * Returns: the cancelled job ids.
 */
export const jobCancelAck: Statement = {
  name: 'leasehold_job_cancel_ack',
  text: `
WITH done AS (
  UPDATE jobs
     SET status = 'cancelled', finished_at = now(), lease_expires_at = NULL
   WHERE ${fence('$3')}
     AND jobs.cancel_requested_at IS NOT NULL
  RETURNING jobs.job_id, jobs.queue, jobs.type, jobs.attempt_count, jobs.worker_id, jobs.started_at, jobs.heartbeat_at
), recorded AS (
  INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, heartbeat_at, finished_at, outcome, error)
  SELECT job_id, attempt_count, worker_id, started_at, heartbeat_at, now(), 'cancelled', 'cancelled by an operator'
    FROM done
)
SELECT job_id, queue, type FROM done`,
};

/**
 * jobRelease — hand leases back without a verdict (graceful shutdown after the grace
 * period): the job is queued again at once and the attempt it used is given back.
 * Params: $1 job_id[], $2 {job_id: attempt}, $3 worker_id, $4 reason.
 * Compare: the fence, and no cancel requested (a cancelled job is not queued again).
 * Swap: queued, due at once with its run_at kept (its place in line, as jobRecoverExpired),
 *       max_attempts + 1 (an interrupted attempt is not the job's fault); the attempt
 *       recorded as `aborted`.
 * Returns: job_id, queue and priority of each released job (ring the doorbell for them).
 */
export const jobRelease: Statement = {
  name: 'leasehold_job_release',
  text: `
WITH done AS (
  UPDATE jobs
     SET status = 'queued', lease_expires_at = NULL,
         max_attempts = jobs.max_attempts + 1
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
 * Compare: status = 'running'; as seen.
 * Swap: queued, due now, lease cleared, the revoked attempt given back (max_attempts + 1;
 *       with $3, at least a whole budget after it, as jobRequeue gives) and recorded as `aborted`.
 * Returns: the requeued rows.
 */
export const jobRevoke: Statement = {
  name: 'leasehold_job_revoke',
  text: `
WITH done AS (
  UPDATE jobs
     SET status = 'queued', run_at = now(), lease_expires_at = NULL, cancel_requested_at = NULL,
         max_attempts = GREATEST(max_attempts + 1, attempt_count + CASE WHEN $3::boolean THEN attempt_budget ELSE 0 END)
   WHERE job_id = ANY($1::bigint[])
     AND status = 'running'
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
 * jobDueWaiting — the first jobs of a queue in claim order (by priority, then oldest) that
 * have been due for at least $2 ms and are still waiting: either their doorbell was lost (a
 * crash between commit and push, a Redis flush or restart) or every worker is busy. Read one
 * level after another (levelByLevel: the levels after the one that fills the limit are not
 * read; a sweep of a queue with a backlog on every level read 20 times the buffers when every
 * level's ranges were read). Off a job's path, so its planning matters less than a claim's.
 * Read-only.
 * Params: $1 queue, $2 grace_ms, $3 limit.
 * Returns: job_id, type, status, priority, run_at, created_at, waited_ms.
 */
const dueWaitingColumns = `job_id, type, status, priority, run_at, created_at, extract(epoch FROM now() - run_at) * 1000 AS waited_ms`;
const dueWaiting = `queue = $1 AND status IN ('queued', 'retrying') AND run_at <= now() - ${ms('$2')}`;
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
 * for, one index range per type and level (as dueTarget): a job no live worker can run is
 * not worth a ring (each would be popped and dropped, every sweep), nor a read past it.
 * Params: as jobDueWaiting, and $4 the types (text[]).
 */
export const jobDueWaitingOfTypes: Statement = { name: 'leasehold_job_due_waiting_of_types', text: dueWaitingBy('$4') };

/** Workers that reported within `aliveParam` ms (database clock) and have not stopped: the live ones. */
const liveWorker = (aliveParam: string) => `stopped_at IS NULL AND heartbeat_at > now() - ${ms(aliveParam)}`;
/** The live workers serving queue `queueParam` (a quiet one serves none). */
const liveWorkersOn = (queueParam: string, aliveParam: string) => `${liveWorker(aliveParam)} AND quiet_at IS NULL AND ${queueParam} = ANY(queues)`;

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

/**
 * jobCurrent — the current rows of jobs, with the database's now(): what a refused
 * transition reports as the reason (read-only, a fresh snapshot after the refusal).
 * Params: $1 job_id[].
 */
export const jobCurrent: Statement = {
  name: 'leasehold_job_current',
  text: `
SELECT ${JOB_COLUMNS}, extract(epoch FROM lease_expires_at - now()) * 1000 AS lease_remaining_ms, ${OWNER_GONE_SQL},
       ${singletonHolderSql('jobs')} AS singleton_holder
  FROM jobs WHERE job_id = ANY($1::bigint[])`,
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

/** The Postgres-only doorbell: wakes LISTENing workers (used when Redis is unreachable). */
export const wakeupNotify: Statement = {
  name: 'leasehold_wakeup_notify',
  text: `SELECT pg_notify('leasehold_wakeup', q) FROM unnest($1::text[]) AS q`,
};

/**
 * workerRegister — one row per worker process incarnation. Its report starts with `quiet: false`:
 * this version reads quiet requests from the start (workerQuiet quiets only such a process). An id registered again (a runner
 * given a fixed workerId, restarted) is a new incarnation: it claims from its start, so an
 * operator's quiet of the previous one is cleared (kept, the row read "quiet" while the new
 * process claimed until its first heartbeat, then stopped claiming on a request it never got).
 * Params: $1 worker_id, $2 host, $3 pid, $4 queues, $5 concurrency, $6 handled job types (NULL = any).
 */
export const workerRegister: Statement = {
  name: 'leasehold_worker_register',
  text: `
INSERT INTO workers (worker_id, host, pid, queues, concurrency, types, metrics)
VALUES ($1, $2, $3, $4::text[], $5, $6::text[], '{"quiet": false}')
ON CONFLICT (worker_id) DO UPDATE SET heartbeat_at = now(), stopped_at = NULL, queues = EXCLUDED.queues, types = EXCLUDED.types, concurrency = EXCLUDED.concurrency,
  quiet_at = NULL, quiet_by = NULL, metrics = workers.metrics || '{"quiet": false}'
RETURNING started_at`,
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
