/**
 * The runner in this process against the real PostgreSQL and Redis: fencing and the
 * AbortSignal, heartbeat errors vs. lost leases, cancel, graceful shutdown.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { createPool } from '../lib/db/client';
import { createLogger } from '../lib/log';
import * as ops from '../lib/queue/ops';
import { RedisDoorbell, RedisReceiver } from '../lib/queue/signal';
import { testDatabase } from '../test/db';
import { REDIS_URL } from '../test/env';
import { jobRow } from '../test/factories';
import { uniquePrefix } from '../test/processes';
import { waitFor } from '../test/wait';
import type { Handler } from './handlers/types';
import { JobAborted, Runner, type RunnerOptions } from './runner';

const db = await testDatabase();
const quiet = createLogger({ test: 'runner' });

interface Blocked {
  started: number;
  abortedAt?: number;
  abortReason?: string;
  abortTick?: number;
}

/**
 * A runner on a queue of its own whose `test.block` handler waits until aborted,
 * recording when and why. Stopped when the test ends.
 */
async function makeRunner(t: TestContext, over: Partial<RunnerOptions> & { heartbeatUrl?: string } = {}) {
  const prefix = uniquePrefix('runner');
  const queue = prefix;
  const pool = createPool(db.url, { name: 'runner', max: 5 });
  const heartbeatPool = createPool(over.heartbeatUrl ?? db.url, { name: 'hb', max: 2, queryTimeoutMs: 1_000 });
  const doorbell = new RedisDoorbell(REDIS_URL, prefix, pool, quiet);
  const receiver = new RedisReceiver(REDIS_URL, prefix, quiet);
  await receiver.ready(2_000);
  const seen = new Map<string, Blocked>();
  let runner!: Runner;
  const block: Handler = (_p, ctx) =>
    new Promise((_, reject) => {
      const rec: Blocked = { started: Date.now() };
      seen.set(ctx.job.id, rec);
      ctx.signal.addEventListener('abort', () => {
        rec.abortedAt = Date.now();
        rec.abortReason = (ctx.signal.reason as JobAborted).reason;
        rec.abortTick = runner.heartbeatTicks;
        reject(ctx.signal.reason);
      });
    });
  runner = new Runner({
    pool,
    heartbeatPool,
    databaseUrl: db.url,
    receiver,
    doorbell,
    handlers: { 'test.block': block },
    queues: [queue],
    concurrency: 4,
    leaseMs: 30_000,
    heartbeatMs: 300,
    pollMs: 500,
    recoverMs: 60_000,
    signalGraceMs: 1_000,
    log: quiet,
    ...over,
  });
  await runner.start();
  t.after(async () => {
    await runner.stop(0);
    receiver.close();
    await doorbell.close();
    await pool.end();
    await heartbeatPool.end();
  });
  const enqueue = async () => (await ops.jobEnqueue(db.pool, [{ type: 'test.block', queue }], { doorbell }))[0]!.id;
  return { runner, seen, enqueue, doorbell };
}

describe('fencing', () => {
  test('after a takeover the old owner writes nothing, its handler aborts at the next heartbeat, and the new outcome stands', async (t) => {
    const { runner, seen, enqueue } = await makeRunner(t);
    const id = await enqueue();
    await waitFor('the runner to start the job', () => seen.get(id));
    const before = await jobRow(db.pool, id);
    const oldLease = { jobId: id, attempt: before.attempt_count as number };

    // The lease "expires" (time by data) and another worker takes the job over.
    await db.pool.query(`UPDATE jobs SET lease_expires_at = now() - interval '1 ms' WHERE job_id = $1`, [id]);
    const tickAtTakeover = runner.heartbeatTicks;
    const tTakeover = Date.now();
    const [taken] = await ops.jobClaim(db.pool, { ids: [id], workerId: 'new-owner', leaseMs: 30_000 });
    assert.equal(taken!.attemptCount, oldLease.attempt + 1);

    // The old owner's heartbeat, complete and fail each change 0 rows.
    assert.equal((await ops.jobHeartbeat(db.pool, { workerId: runner.workerId, leaseMs: 30_000, leases: [oldLease] })).renewed.size, 0);
    assert.equal((await ops.jobComplete(db.pool, { workerId: runner.workerId, items: [oldLease] })).size, 0);
    assert.equal((await ops.jobFail(db.pool, { workerId: runner.workerId, items: [{ ...oldLease, error: 'late', backoffMs: 0 }] })).size, 0);

    // Its handler's AbortSignal fires within one heartbeat interval: on the first tick
    // that ran after the takeover (or the one already in flight).
    const rec = await waitFor('the old handler to abort', () => seen.get(id)!.abortedAt && seen.get(id));
    assert.equal(rec.abortReason, 'lease_lost');
    assert.ok(rec.abortTick! - tickAtTakeover <= 1, `aborted at tick ${rec.abortTick}, takeover at tick ${tickAtTakeover}`);
    console.log(`# abort ${rec.abortedAt! - tTakeover} ms after the takeover (heartbeat every 300 ms)`);
    await waitFor('the runner to drop the job', () => runner.inFlight === 0);
    assert.equal(runner.stats.leaseLost, 1);

    // The new owner's outcome stands.
    assert.ok((await ops.jobComplete(db.pool, { workerId: 'new-owner', items: [{ jobId: id, attempt: taken!.attemptCount }] })).has(id));
    const row = await jobRow(db.pool, id);
    assert.deepEqual([row.status, row.worker_id, row.attempt_count], ['completed', 'new-owner', oldLease.attempt + 1]);
  });

  test('a heartbeat that errors is not a lost lease: the job keeps running until its lease would end, then aborts', async (t) => {
    // Renewals go to a port where nothing listens: every heartbeat errors.
    const { runner, seen, enqueue } = await makeRunner(t, {
      heartbeatUrl: 'postgres://postgres@127.0.0.1:1/none',
      leaseMs: 1_500,
      heartbeatMs: 200,
    });
    const id = await enqueue();
    const rec = await waitFor('the handler to abort', () => seen.get(id)?.abortedAt && seen.get(id), { timeoutMs: 30_000 });
    assert.equal(rec.abortReason, 'lease_expired_locally');
    assert.ok(rec.abortTick! >= 4, `aborted at heartbeat tick ${rec.abortTick}: errors alone must not abort`);
    assert.ok(rec.abortedAt! - rec.started >= 1_400, `aborted ${rec.abortedAt! - rec.started} ms after start, before the lease ended`);
    await waitFor('the runner to drop the job', () => runner.inFlight === 0);
    // It wrote nothing: the job is still running under its (now expired) lease, for recover to move on.
    assert.equal((await jobRow(db.pool, id)).status, 'running');
  });
});

describe('cancel', () => {
  test('an operator cancel aborts the running handler at the next heartbeat and ends the job cancelled', async (t) => {
    const { runner, seen, enqueue } = await makeRunner(t);
    const id = await enqueue();
    await waitFor('the job to start', () => seen.get(id));
    const tick = runner.heartbeatTicks;
    const r = await ops.jobCancel(db.pool, { ids: [id] });
    assert.equal(r.items[0]!.outcome, 'cancel_requested');
    const rec = await waitFor('the handler to abort', () => seen.get(id)!.abortedAt && seen.get(id));
    assert.equal(rec.abortReason, 'cancelled');
    assert.ok(rec.abortTick! - tick <= 1);
    await waitFor('the job to be cancelled', async () => (await jobRow(db.pool, id)).status === 'cancelled');
    const { rows } = await db.pool.query('SELECT outcome FROM job_attempts WHERE job_id = $1', [id]);
    assert.deepEqual(rows, [{ outcome: 'cancelled' }]);
    // Recover never brings a cancelled job back.
    await ops.jobRecover(db.pool, {});
    assert.equal((await jobRow(db.pool, id)).status, 'cancelled');
  });
});

describe('graceful shutdown', () => {
  test('stop() lets the grace period pass, then hands the leases back: queued, attempt not spent', async (t) => {
    const { runner, seen, enqueue } = await makeRunner(t);
    const ids = [await enqueue(), await enqueue()];
    await waitFor('both jobs to start', () => ids.every((id) => seen.has(id)));
    await runner.stop(200);
    for (const id of ids) {
      const row = await jobRow(db.pool, id);
      assert.deepEqual([row.status, row.attempt_count, row.max_attempts], ['queued', 1, 4]);
      assert.equal(seen.get(id)!.abortReason, 'shutdown');
    }
    const { rows } = await db.pool.query(`SELECT outcome FROM job_attempts WHERE job_id = ANY($1)`, [ids]);
    assert.deepEqual(rows.map((r) => r.outcome), ['aborted', 'aborted']);
  });
});

describe('checkpoints', () => {
  test('a checkpoint from an attempt that lost its lease is not saved, and the handler is stopped', async (t) => {
    let rejected: unknown;
    let takenOver!: () => void;
    const afterTakeover = new Promise<void>((r) => (takenOver = r));
    const { seen, enqueue, runner } = await makeRunner(t, {
      handlers: {
        'test.block': async (_p, ctx) => {
          await ctx.checkpoint('step', 1);
          await afterTakeover; // the test takes the job over meanwhile
          try {
            await ctx.checkpoint('step', 2);
          } catch (err) {
            rejected = err;
            throw err;
          }
        },
      },
      heartbeatMs: 60_000, // only the checkpoint can discover the loss here
      pollMs: 60_000, // and the runner must not take the expired job back itself
    });
    void seen;
    const id = await enqueue();
    await waitFor('the first checkpoint', async () => (await jobRow(db.pool, id)).checkpoints?.step?.value === 1);
    await db.pool.query(`UPDATE jobs SET lease_expires_at = now() - interval '1 ms' WHERE job_id = $1`, [id]);
    const [taken] = await ops.jobClaim(db.pool, { ids: [id], workerId: 'new-owner', leaseMs: 30_000 });
    assert.equal(taken!.attemptCount, 2);
    takenOver();
    await waitFor('the stale checkpoint to be refused', () => rejected);
    assert.ok(rejected instanceof JobAborted);
    const row = await jobRow(db.pool, id);
    assert.deepEqual([row.checkpoints.step.value, row.checkpoints.step.attempt], [1, 1], 'step 2 of the old attempt was refused after the takeover');
    await waitFor('the runner to drop the job', () => runner.inFlight === 0);
  });
});
