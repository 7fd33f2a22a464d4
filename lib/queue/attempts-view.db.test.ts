/**
 * job_attempts, the view operators query (CONTRACT.md: one row per claim): the ended
 * attempts' rows and each running job's attempt in progress. Driven by the same statements
 * the workers run.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase, type TestDb } from '../../test/db';
import { getJob } from './read';
import * as ops from './ops';

const db: TestDb = await testDatabase();

const W1 = 'host-a:100:view01';
const W2 = 'host-b:200:view02';
const LEASE = 30_000;

const attemptsOf = async (id: string) =>
  (
    await db.pool.query(
      `SELECT a.attempt, a.worker_id, a.outcome, a.finished_at IS NULL AS open,
              a.started_at = j.started_at AND a.heartbeat_at = j.heartbeat_at AS the_jobs_own
         FROM job_attempts a JOIN jobs j USING (job_id) WHERE a.job_id = $1 ORDER BY a.attempt`,
      [id],
    )
  ).rows;

async function claim(id: string, workerId: string) {
  const [job] = await ops.jobClaim(db.pool, { ids: [id], workerId, leaseMs: LEASE });
  assert.ok(job, `${workerId} claims ${id}`);
  return { jobId: id, attempt: job.attemptCount };
}

test('one row per claim: the attempt in progress from its claim on, each ended one once', async () => {
  const id = (await ops.jobEnqueue(db.pool, [{ type: 'demo.noop', queue: 'view-q', maxAttempts: 3 }]))[0]!.id;
  assert.deepEqual(await attemptsOf(id), [], 'a queued job has no attempt');

  const first = await claim(id, W1);
  assert.deepEqual(await attemptsOf(id), [{ attempt: 1, worker_id: W1, outcome: null, open: true, the_jobs_own: true }]);
  await ops.jobHeartbeat(db.pool, { workerId: W1, leaseMs: LEASE, leases: [first] });
  assert.equal((await attemptsOf(id))[0].the_jobs_own, true, 'the renewal shows in the open attempt');

  const failed = await ops.jobFail(db.pool, { workerId: W1, items: [{ ...first, error: 'flaky', backoffMs: 0 }] });
  assert.equal(failed.get(id)?.status, 'retrying');
  assert.deepEqual(
    (await attemptsOf(id)).map((a) => [a.attempt, a.outcome, a.open]),
    [[1, 'retried', false]],
  );

  const second = await claim(id, W2);
  assert.deepEqual(
    (await attemptsOf(id)).map((a) => [a.attempt, a.worker_id, a.outcome, a.open]),
    [[1, W1, 'retried', false], [2, W2, null, true]],
  );
  const detail = await getJob(db.pool, id);
  assert.deepEqual(detail?.attempts.map((a) => [a.attempt, a.outcome, a.finishedAt === null]), [[1, 'retried', false], [2, null, true]], 'the job page lists the same');

  assert.ok((await ops.jobComplete(db.pool, { workerId: W2, items: [second] })).has(id));
  assert.deepEqual(
    (await attemptsOf(id)).map((a) => [a.attempt, a.worker_id, a.outcome, a.open]),
    [[1, W1, 'retried', false], [2, W2, 'completed', false]],
    'the ended attempt replaces the open one, never beside it',
  );
});

test('a process of an earlier version still writes through job_attempts: its inserts and deletes reach the stored rows, a running attempt stays', async () => {
  const jobs = await ops.jobEnqueue(db.pool, [{ type: 'demo.noop', queue: 'view-old' }, { type: 'demo.noop', queue: 'view-old' }]);
  const [done, running] = jobs.map((j) => j.id) as [string, string];
  const lease = await claim(done, W1);
  await claim(running, W1);
  // The completion as 0025's statements wrote it: the attempt's end inserted into
  // job_attempts in the statement that ends the job.
  await db.pool.query(
    `WITH done AS (
       UPDATE jobs SET status = 'completed', finished_at = now(), lease_expires_at = NULL
        WHERE job_id = $1 AND worker_id = $2 AND attempt_count = $3 AND status = 'running'
       RETURNING job_id, attempt_count, worker_id, started_at, heartbeat_at
     ), attempt AS (
       INSERT INTO job_attempts (job_id, attempt, worker_id, started_at, heartbeat_at, finished_at, outcome)
       SELECT job_id, attempt_count, worker_id, started_at, heartbeat_at, now(), 'completed' FROM done
     )
     SELECT count(*)::int AS n FROM done`,
    [done, W1, lease.attempt],
  );
  const stored = await db.pool.query(`SELECT attempt, outcome FROM ended_attempts WHERE job_id = $1`, [done]);
  assert.deepEqual(stored.rows, [{ attempt: 1, outcome: 'completed' }]);
  assert.deepEqual((await attemptsOf(done)).map((a) => [a.outcome, a.open]), [['completed', false]]);

  // Its retention's delete, and an operator's.
  await db.pool.query(`WITH gone AS (DELETE FROM job_attempts WHERE job_id = ANY($1::bigint[])) SELECT 1`, [[done, running]]);
  const recount = await db.pool.query(`INSERT INTO job_attempts (job_id, attempt, worker_id, started_at, outcome) VALUES ($1, 1, $2, now(), 'completed')`, [done, W1]);
  assert.equal(recount.rowCount, 1);
  const deleted = await db.pool.query(`DELETE FROM job_attempts WHERE job_id = ANY($1::bigint[])`, [[done, running]]);
  assert.equal(deleted.rowCount, 1, 'the stored row is counted, not the running attempt');
  assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM ended_attempts WHERE job_id = $1`, [done])).rows[0].n, 0);
  assert.deepEqual((await attemptsOf(running)).map((a) => [a.worker_id, a.open]), [[W1, true]], 'the running job\'s attempt is its own row, not deleted');
  assert.equal((await db.pool.query(`SELECT status FROM jobs WHERE job_id = $1`, [running])).rows[0].status, 'running');
});
