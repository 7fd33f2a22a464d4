import { holdsSingletonKey } from '../job';
import { attemptsFor, type Statement } from './fragments';

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
 *          sequence, conflicts only with a sequence set back: ops/enqueue.ts conflictText says so).
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
    -- both kinds of key, paired differently, or a producer's open transaction holding one
    -- key, can still deadlock with it: PostgreSQL fails one, and ops.enqueue tries it again.)
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
