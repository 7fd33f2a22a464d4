/**
 * The runner in this process against the real PostgreSQL and Redis: fencing and the
 * AbortSignal, heartbeat errors vs. lost leases, cancel, graceful shutdown.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, type TestContext, test } from 'node:test';
import { createPool, useTransaction } from '../lib/db/client';
import { createLogger } from '../lib/log';
import { PermanentError } from '../lib/queue/errors';
import { FsResultStore } from '../lib/results';
import { readTypeTotals } from '../lib/queue/type-metrics';
import * as ops from '../lib/queue/ops';
import { listWorkers } from '../lib/queue/read';
import { queueKey, RedisDoorbell, RedisReceiver } from '../lib/queue/signal';
import { testDatabase } from '../test/db';
import { REDIS_URL } from '../test/env';
import { insertJob, jobRow } from '../test/factories';
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
  /** The runner's renewal rounds answered when it aborted. */
  abortAnswer?: number;
}

/**
 * A runner on a queue of its own whose `test.block` handler waits until aborted,
 * recording when and why. Stopped when the test ends.
 */
async function makeRunner(t: TestContext, { prefix = uniquePrefix('runner'), ...over }: Partial<RunnerOptions> & { heartbeatUrl?: string; prefix?: string } = {}) {
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
        rec.abortAnswer = runner.heartbeatAnswers;
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
  const enqueue = async (o: { maxAttempts?: number; payload?: unknown } = {}) => (await ops.jobEnqueue(db.pool, [{ type: 'test.block', queue, ...o }], { doorbell }))[0]!.id;
  return { runner, seen, enqueue, doorbell, heartbeatPool, receiver };
}

describe('fencing', () => {
  test("a dead worker's job taken over by an idle worker's claim counts as recovered (its own process cannot count the loss)", async (t) => {
    const prefix = uniquePrefix('takeover');
    const id = await insertJob(db.pool, { queue: prefix, type: 'test.block', status: 'running', workerId: 'gone:1:dead00', leaseInMs: -1_000 });
    // No sweep gets there first: another process holds the sweep's lock.
    const sweeper = await db.pool.connect();
    await sweeper.query(`SELECT pg_advisory_lock(hashtext('leasehold.recover'))`);
    t.after(async () => {
      await sweeper.query(`SELECT pg_advisory_unlock(hashtext('leasehold.recover'))`);
      sweeper.release();
    });
    const { runner } = await makeRunner(t, { prefix });
    await waitFor('the expired lease to be taken over', async () => (await jobRow(db.pool, id)).worker_id === runner.workerId);
    assert.equal(runner.stats.recovered, 1);
    // And against its type, for the overview's Job types table.
    assert.equal(runner.byType.snapshot().find((r) => r.queue === prefix && r.type === 'test.block')?.leaseLost, 1);
    const { rows } = await db.pool.query(`SELECT attempt, worker_id, outcome FROM job_attempts WHERE job_id = $1 ORDER BY attempt`, [id]);
    assert.deepEqual(rows, [
      { attempt: 1, worker_id: 'gone:1:dead00', outcome: 'lease_lost' },
      { attempt: 2, worker_id: runner.workerId, outcome: null }, // in progress
    ]);
  });

  test('after a takeover the old owner writes nothing, its handler aborts at the next heartbeat, and the new outcome stands', async (t) => {
    const { runner, seen, enqueue } = await makeRunner(t);
    const id = await enqueue();
    await waitFor('the runner to start the job', () => seen.get(id));
    const before = await jobRow(db.pool, id);
    const oldLease = { jobId: id, attempt: before.attempt_count as number };

    // The lease "expires" (time by data) and another worker takes the job over, in one
    // transaction: the row locked between the two, neither a renewal of the old owner's nor
    // its own claim of expired leases can come between them.
    const [taken] = await useTransaction(db.pool, async (c) => {
      await c.query(`UPDATE jobs SET lease_expires_at = now() - interval '1 ms' WHERE job_id = $1`, [id]);
      return ops.jobClaim(c, { ids: [id], workerId: 'new-owner', leaseMs: 30_000 });
    });
    // Read once the takeover has committed.
    const answersAtTakeover = runner.heartbeatAnswers;
    const tTakeover = Date.now();
    assert.ok(taken, 'taken over');
    assert.equal(taken.attemptCount, oldLease.attempt + 1);

    // The old owner's heartbeat, complete and fail each change 0 rows.
    assert.equal((await ops.jobHeartbeat(db.pool, { workerId: runner.workerId, leaseMs: 30_000, leases: [oldLease] })).renewed.size, 0);
    assert.equal((await ops.jobComplete(db.pool, { workerId: runner.workerId, items: [oldLease] })).size, 0);
    assert.equal((await ops.jobFail(db.pool, { workerId: runner.workerId, items: [{ ...oldLease, error: 'late', backoffMs: 0 }] })).size, 0);

    // Its handler's AbortSignal fires at the first renewal sent after the takeover: at the
    // latest the second answered after it (the first may have been sent before), however many
    // ticks were skipped or renewals failed on a loaded machine meanwhile.
    const rec = await waitFor('the old handler to abort', () => seen.get(id)!.abortedAt && seen.get(id));
    assert.equal(rec.abortReason, 'lease_lost');
    assert.ok(rec.abortAnswer! - answersAtTakeover <= 2, `aborted at answer ${rec.abortAnswer}, takeover at answer ${answersAtTakeover}`);
    console.log(`# abort ${rec.abortedAt! - tTakeover} ms after the takeover (heartbeat every 300 ms)`);
    await waitFor('the runner to drop the job', () => runner.inFlight === 0);
    assert.equal(runner.stats.leaseLost, 1);

    // The new owner's outcome stands.
    assert.ok((await ops.jobComplete(db.pool, { workerId: 'new-owner', items: [{ jobId: id, attempt: taken.attemptCount }] })).has(id));
    const row = await jobRow(db.pool, id);
    assert.deepEqual([row.status, row.worker_id, row.attempt_count], ['completed', 'new-owner', oldLease.attempt + 1]);
  });

  test('a heartbeat that errors is not a lost lease: the job keeps running until its lease nearly ends, then aborts before the database lets it go', async (t) => {
    // Renewals go to a port where nothing listens: every heartbeat errors.
    const { runner, seen, enqueue } = await makeRunner(t, {
      heartbeatUrl: 'postgres://postgres@127.0.0.1:1/none',
      leaseMs: 10_000, // its guard (500 ms) outlasts a late timer on a busy machine
      heartbeatMs: 200,
    });
    const id = await enqueue();
    const rec = await waitFor('the handler to abort', () => seen.get(id)?.abortedAt && seen.get(id), { timeoutMs: 30_000 });
    assert.equal(rec.abortReason, 'lease_expired_locally');
    assert.ok(rec.abortTick! >= 30, `aborted at heartbeat tick ${rec.abortTick}: errors alone must not abort`);
    assert.ok(rec.abortedAt! - rec.started >= 8_000, `aborted ${rec.abortedAt! - rec.started} ms after start, long before the lease's end`);
    await abortedWhileStillLeased(id, rec);
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
    const r = await ops.jobCancel(db.pool, { ids: [id] });
    // Read once the request has committed: the first renewal sent after it brings it, at the
    // latest the second answered after it.
    const answers = runner.heartbeatAnswers;
    assert.equal(r.items[0]!.outcome, 'cancel_requested');
    const rec = await waitFor('the handler to abort', () => seen.get(id)!.abortedAt && seen.get(id));
    assert.equal(rec.abortReason, 'cancelled');
    assert.ok(rec.abortAnswer! - answers <= 2, `aborted at answer ${rec.abortAnswer}, cancel requested at answer ${answers}`);
    await waitFor('the job to be cancelled', async () => (await jobRow(db.pool, id)).status === 'cancelled');
    const { rows } = await db.pool.query('SELECT outcome, error FROM job_attempts WHERE job_id = $1', [id]);
    assert.deepEqual(rows, [{ outcome: 'cancelled', error: 'cancelled by an operator' }]);
    // Recover never brings a cancelled job back.
    await ops.jobRecover(db.pool, {});
    assert.equal((await jobRow(db.pool, id)).status, 'cancelled');
  });

  test('a handler that ignores its signal is given up on: the cancelled job ends cancelled and its slot runs the next job', async (t) => {
    const ran: string[] = [];
    const { enqueue } = await makeRunner(t, {
      concurrency: 1,
      abandonAfterMs: 300,
      // The first call never settles and never looks at its signal; the next return at once.
      handlers: { 'test.block': (_p, ctx) => (ran.push(ctx.job.id) === 1 ? new Promise(() => {}) : undefined) },
    });
    const stuck = await enqueue();
    await waitFor('the first job to start', () => ran.includes(stuck));
    const next = await enqueue();
    await ops.jobCancel(db.pool, { ids: [stuck] });
    await waitFor('the ignored cancel to end the job', async () => (await jobRow(db.pool, stuck)).status === 'cancelled', { timeoutMs: 30_000 });
    await waitFor('the freed slot to run the next job', async () => (await jobRow(db.pool, next)).status === 'completed', { timeoutMs: 30_000 });
  });

  test('a handler past its time limit fails as timed out, whether it stops at its signal or ignores it; its slot runs the next job', async (t) => {
    const { enqueue } = await makeRunner(t, {
      concurrency: 1,
      abandonAfterMs: 300,
      timeoutFor: (type) => (type === 'test.block' ? 300 : null),
      handlers: {
        'test.block': (p: { honour?: boolean }, ctx) => {
          if (ctx.attempt > 1) return undefined; // the retry is quick
          // The first attempt hangs: it never settles (ignoring its signal), or it stops when told, with an error of its own.
          return new Promise((_, reject) => {
            if (p.honour) ctx.signal.addEventListener('abort', () => reject(new Error('stopped because the signal fired')));
          });
        },
      },
    });
    const ignores = await enqueue({ maxAttempts: 2 });
    await waitFor('the hung job to time out, be retried and complete', async () => (await jobRow(db.pool, ignores)).status === 'completed');
    const stops = await enqueue({ payload: { honour: true }, maxAttempts: 1 });
    await waitFor('the job that stopped at its signal to reach the dead letter', async () => (await jobRow(db.pool, stops)).status === 'failed');
    const { rows } = await db.pool.query(`SELECT job_id::text AS id, attempt, outcome, error FROM job_attempts WHERE job_id = ANY($1) ORDER BY job_id, attempt`, [[ignores, stops]]);
    const timedOut = 'timed out: the handler ran longer than 300 ms';
    assert.deepEqual(rows, [
      { id: ignores, attempt: 1, outcome: 'retried', error: timedOut },
      { id: ignores, attempt: 2, outcome: 'completed', error: null },
      { id: stops, attempt: 1, outcome: 'failed', error: timedOut },
    ]);
    assert.equal((await jobRow(db.pool, stops)).error, timedOut);
  });

  test('a handler that returns after its cancel fired: the job ends cancelled, and what it returned is not kept', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-results-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const started = new Set<string>();
    const { enqueue } = await makeRunner(t, {
      results: new FsResultStore(dir),
      handlers: {
        'test.block': (_p, ctx) =>
          new Promise((resolve) => {
            started.add(ctx.job.id);
            ctx.signal.addEventListener('abort', () => resolve({ partial: true }));
          }),
      },
    });
    const id = await enqueue();
    await waitFor('the job to start', () => started.has(id));
    await ops.jobCancel(db.pool, { ids: [id] });
    await waitFor('the job to end', async () => (await jobRow(db.pool, id)).status !== 'running');
    const row = await jobRow(db.pool, id);
    assert.deepEqual([row.status, row.result_key], ['cancelled', null]);
    assert.deepEqual(fs.readdirSync(dir), [], 'no result written');
  });
});

describe('counters', () => {
  // The scrape sums every worker row: a row whose counters start again from zero (a runner
  // given a fixed workerId, restarted) looks to Prometheus like a counter reset.
  test("a worker id registered again goes on from its earlier incarnations' counts; its row never goes down", async (t) => {
    const workerId = `fixed-${randomBytes(4).toString('hex')}`;
    const prefix = uniquePrefix('fixed-id');
    const completedOf = async () => Number((await db.pool.query(`SELECT metrics->>'completed' AS n FROM workers WHERE worker_id = $1`, [workerId])).rows[0]?.n ?? 0);
    const runTwo = async (k: number) => {
      const { runner, doorbell } = await makeRunner(t, { prefix, workerId, handlers: { 'test.ok': async () => 'ok' } });
      const ids = (await ops.jobEnqueue(db.pool, [{ type: 'test.ok', queue: prefix }, { type: 'test.ok', queue: prefix }], { doorbell })).map((r) => r.id);
      await waitFor(`incarnation ${k}'s two jobs to complete`, async () =>
        (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1::bigint[]) AND status = 'completed'`, [ids])).rows[0].n === 2,
      );
      await runner.stop(0);
    };
    await runTwo(1);
    assert.equal(await completedOf(), 2);
    await runTwo(2);
    assert.equal(await completedOf(), 4, 'two and two');
  });
});

describe('handler outcomes', () => {
  test('a thenable that calls back twice finishes its job once and frees one slot', async (t) => {
    const { runner, enqueue } = await makeRunner(t, {
      concurrency: 1,
      handlers: { 'test.block': () => ({ then: (ok: (v: null) => void) => (ok(null), ok(null)) }) as unknown as Promise<null> },
    });
    const id = await enqueue();
    await waitFor('the job to complete', async () => (await jobRow(db.pool, id)).status === 'completed');
    await waitFor('the completion to settle', () => runner.inFlight === 0);
    assert.equal(runner.metrics().running, 0, 'one slot freed, not two');
    assert.equal(runner.stats.completed, 1);
  });

  test('a failure backs off by the tries of the current budget, not by the lifetime attempt number', async (t) => {
    const prefix = uniquePrefix('backoff');
    await makeRunner(t, { prefix, handlers: { 'test.block': () => { throw new Error('boom'); } } });
    // Ten attempts before, all handed back (shutdowns): the next is the first try of its budget of 3.
    const id = await insertJob(db.pool, { queue: prefix, type: 'test.block', attemptCount: 10, maxAttempts: 13 });
    await db.pool.query('UPDATE jobs SET attempt_budget = 3 WHERE job_id = $1', [id]);
    await waitFor('the job to fail its attempt', async () => (await jobRow(db.pool, id)).status === 'retrying');
    const { rows } = await db.pool.query(`SELECT extract(epoch FROM run_at - now()) AS wait_s FROM jobs WHERE job_id = $1`, [id]);
    assert.ok(rows[0].wait_s < 5, `backs off ${rows[0].wait_s} s (a first failure: at most 1 s), not 2^10 s`);
  });

  test('a result JSON has no text for (a function) fails the job for good, not retried', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-results-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const { enqueue } = await makeRunner(t, { results: new FsResultStore(dir), handlers: { 'test.block': () => () => 1 } });
    const id = await enqueue();
    await waitFor('the job to end its attempt', async () => (await jobRow(db.pool, id)).status !== 'running' && (await jobRow(db.pool, id)).status !== 'queued');
    const row = await jobRow(db.pool, id);
    assert.equal(row.status, 'failed');
    assert.match(row.error, /not JSON-serializable/);
  });
});

describe('an outcome that cannot be recorded', () => {
  test('what a handler throws keeps its message: a plain object, one with no prototype, a message that is no string', async (t) => {
    const thrown: Record<string, unknown> = {
      plain: { message: 'quota exceeded for tenant 7', code: 429 },
      bare: Object.assign(Object.create(null), { message: 'the real reason' }),
      numeric: Object.assign(new Error('x'), { message: 404 }),
      value: { reason: 'no message at all' },
    };
    const { runner, enqueue } = await makeRunner(t, {
      handlers: {
        'test.block': (p: { kind: string }) => {
          throw thrown[p.kind];
        },
      },
    });
    const ids = Object.fromEntries(await Promise.all(Object.keys(thrown).map(async (kind) => [kind, await enqueue({ maxAttempts: 1, payload: { kind } })])));
    const errorOf = async (kind: string) =>
      waitFor(`the ${kind} job to fail`, async () => {
        const r = await jobRow(db.pool, ids[kind]);
        return r.status === 'failed' ? r.error : null;
      });
    assert.equal(await errorOf('plain'), 'quota exceeded for tenant 7');
    assert.equal(await errorOf('bare'), 'the real reason');
    assert.equal(await errorOf('numeric'), '404');
    assert.equal(await errorOf('value'), '{"reason":"no message at all"}');
    await waitFor('the runner to drop the jobs', () => runner.inFlight === 0);
    assert.equal(runner.stats.leaseLost, 0, 'each failure was recorded as such, none left to expire');
  });

  test('a result store that never answers does not keep the job running under renewed leases: given up after a lease, then recovered', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-results-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const store = new FsResultStore(dir);
    store.put = () => new Promise(() => {}); // never settles
    const { runner, enqueue } = await makeRunner(t, {
      results: store,
      leaseMs: 2_000,
      recoverMs: 500,
      handlers: { 'test.block': () => ({ some: 'result' }) },
    });
    const id = await enqueue({ maxAttempts: 1 });
    const row = await waitFor('the job to leave running', async () => {
      const r = await jobRow(db.pool, id);
      return r.status !== 'running' && r.status !== 'queued' ? r : null;
    }, { timeoutMs: 30_000 });
    assert.equal(row.status, 'failed', 'its one attempt was lost, and the sweep moved it on');
    const { rows } = await db.pool.query('SELECT outcome FROM job_attempts WHERE job_id = $1', [id]);
    assert.deepEqual(rows.map((r) => r.outcome), ['lease_lost']);
    assert.equal(runner.inFlight, 0);
  });
});

describe('queue limits and prefetch', () => {
  test("a process that prefetches holds no job of a limited queue it has no slot for: another worker's free slots run them", async (t) => {
    const slow = uniquePrefix('slow');
    const limited = uniquePrefix('limited');
    await ops.queueSetControls(db.pool, { name: limited, concurrencyLimit: 2 });
    t.after(() => db.pool.query('DELETE FROM queues WHERE name = $1', [limited]));
    const quick: Handler = () => undefined;
    // A: one slot, busy with a job that runs until the test ends, and room to prefetch.
    const a = await makeRunner(t, { prefix: slow, queues: [slow, limited], concurrency: 1, prefetch: 4, handlers: { 'test.block': (_p, ctx) => new Promise((_, no) => ctx.signal.addEventListener('abort', () => no(ctx.signal.reason))), 'test.quick': quick } });
    const busy = await a.enqueue();
    await waitFor('A to run the long job', async () => (await jobRow(db.pool, busy)).status === 'running');
    // B: free slots on the limited queue only.
    await makeRunner(t, { prefix: uniquePrefix('b'), queues: [limited], concurrency: 4, handlers: { 'test.quick': quick } });
    const ids = (await ops.jobEnqueue(db.pool, Array.from({ length: 6 }, () => ({ type: 'test.quick', queue: limited })))).map((r) => r.id);
    await waitFor('every job of the limited queue to complete while A is busy', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND status = 'completed'`, [ids])).rows[0].n === ids.length,
    { timeoutMs: 20_000 });
    const { rows } = await db.pool.query(`SELECT DISTINCT worker_id FROM job_attempts WHERE job_id = ANY($1)`, [ids]);
    assert.ok(!rows.some((r) => r.worker_id === a.runner.workerId), 'A, with no free slot, claimed none of them');
  });
  test('jobs claimed ahead behind a handler that never ends go back to the queue after the hold, and run on a worker with a free slot', async (t) => {
    const prefix = uniquePrefix('held');
    const quick: Handler = () => undefined;
    // A: one slot, taken by a job that runs until the test ends, and room to claim 4 ahead.
    const a = await makeRunner(t, { prefix, concurrency: 1, prefetch: 4, prefetchHoldMs: 500, handlers: { 'test.block': (_p, ctx) => new Promise((_, no) => ctx.signal.addEventListener('abort', () => no(ctx.signal.reason))), 'test.quick': quick } });
    const busy = await a.enqueue();
    await waitFor('A to run the long job', async () => (await jobRow(db.pool, busy)).status === 'running');
    const ids = (await ops.jobEnqueue(db.pool, Array.from({ length: 4 }, () => ({ type: 'test.quick', queue: prefix, maxAttempts: 3 })), { doorbell: a.doorbell })).map((r) => r.id);
    // The case under test: A holds them, claimed ahead, with no slot to run them.
    await waitFor('A to claim the quick jobs ahead', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND status = 'running' AND worker_id = $2`, [ids, a.runner.workerId])).rows[0].n > 0);
    // B: free slots on the same queue, no prefetch.
    const b = await makeRunner(t, { prefix, concurrency: 4, handlers: { 'test.quick': quick } });
    await waitFor('every quick job to complete while A is still busy', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND status = 'completed'`, [ids])).rows[0].n === ids.length,
    { timeoutMs: 20_000 });
    const { rows } = await db.pool.query(
      `SELECT job_id::text AS id, worker_id, outcome, error FROM job_attempts WHERE job_id = ANY($1) ORDER BY job_id, attempt`, [ids]);
    for (const id of ids) {
      const attempts = rows.filter((r) => r.id === id);
      const last = attempts.at(-1);
      assert.equal(last?.outcome, 'completed', `job ${id}: ${JSON.stringify(attempts)}`);
      assert.equal(last?.worker_id, b.runner.workerId, `job ${id} ran on B, which had a free slot`);
      for (const r of attempts.slice(0, -1)) {
        assert.equal(r.worker_id, a.runner.workerId);
        assert.equal(r.outcome, 'aborted');
        assert.match(r.error, /claimed ahead, no slot freed within 500 ms/);
      }
    }
    assert.ok(rows.some((r) => r.outcome === 'aborted'), 'A handed at least one claimed-ahead job back');
    const { rows: left } = await db.pool.query(`SELECT (max_attempts - attempt_count)::int AS n FROM jobs WHERE job_id = ANY($1)`, [ids]);
    assert.deepEqual(left.map((r) => r.n), [2, 2, 2, 2], 'of 3 attempts, only the one that ran was spent: a handed-back attempt is given back');
    assert.equal((await jobRow(db.pool, busy)).status, 'running', 'the long job still runs on A');
  });
});

/**
 * One slot, held by a job that runs until the test ends, and two quick jobs claimed ahead
 * behind it; the first of those is then cancelled. `over`: the runner's settings beside these.
 */
async function cancelOneHeldAhead(t: TestContext, over: Parameters<typeof makeRunner>[1] & { prefix: string }) {
  const a = await makeRunner(t, {
    concurrency: 1,
    prefetch: 4,
    prefetchHoldMs: 120_000,
    handlers: { 'test.block': (_p, ctx) => new Promise((_, no) => ctx.signal.addEventListener('abort', () => no(ctx.signal.reason))), 'test.quick': () => undefined },
    ...over,
  });
  const busy = await a.enqueue();
  await waitFor('the long job to run', async () => (await jobRow(db.pool, busy)).status === 'running');
  const ids = (await ops.jobEnqueue(db.pool, Array.from({ length: 2 }, () => ({ type: 'test.quick', queue: over.prefix })), { doorbell: a.doorbell })).map((r) => r.id);
  await waitFor('both held', async () =>
    (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND status = 'running' AND worker_id = $2`, [ids, a.runner.workerId])).rows[0].n === 2);
  assert.equal((await ops.jobCancel(db.pool, { ids: [ids[0]!] })).items[0]!.outcome, 'cancel_requested');
  return { a, cancelled: ids[0]!, other: ids[1]! };
}

/** It ended cancelled (within `timeoutMs`), its attempt said never to have run, counted by the process; the other job is still held. */
async function endedUnstarted({ a, cancelled, other }: Awaited<ReturnType<typeof cancelOneHeldAhead>>, timeoutMs?: number) {
  await waitFor('the cancelled one to end', async () => (await jobRow(db.pool, cancelled)).status === 'cancelled', { timeoutMs });
  const { rows } = await db.pool.query('SELECT outcome, error FROM job_attempts WHERE job_id = $1', [cancelled]);
  assert.deepEqual(rows, [{ outcome: 'cancelled', error: ops.CANCELLED_UNSTARTED }]);
  await waitFor('it to be counted as cancelled by this process', () => a.runner.stats.cancelled === 1);
  assert.equal((await jobRow(db.pool, other)).status, 'running', 'the other still held behind the long job');
}

describe('a job claimed ahead and cancelled before it starts', () => {
  test('it ends cancelled at the heartbeat, its attempt said to have never run; the others held stay held', async (t) => {
    await endedUnstarted(await cancelOneHeldAhead(t, { prefix: uniquePrefix('heldcancel') }));
  });
});

describe('job types a worker has no handler for', () => {
  test('two fleets with different handlers on one queue: each job runs once, on a worker that has its handler, and none fails', async (t) => {
    const prefix = uniquePrefix('fleets');
    const record = (into: string[]): Handler => (_p, ctx) => void into.push(ctx.job.id);
    const ranA: string[] = [];
    const ranB: string[] = [];
    const a = await makeRunner(t, { prefix, handlers: { 'test.a': record(ranA) } });
    const b = await makeRunner(t, { prefix, handlers: { 'test.b': record(ranB) } });
    const inputs = Array.from({ length: 12 }, (_, k) => ({ type: k % 2 ? 'test.b' : 'test.a', queue: prefix }));
    const ids = (await ops.jobEnqueue(db.pool, inputs, { doorbell: a.doorbell })).map((r) => r.id);
    await waitFor('every job to complete', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND status = 'completed'`, [ids])).rows[0].n === ids.length,
    { timeoutMs: 30_000 });
    assert.deepEqual(ranA.sort(), ids.filter((_, k) => k % 2 === 0).sort());
    assert.deepEqual(ranB.sort(), ids.filter((_, k) => k % 2 === 1).sort());
    const { rows } = await db.pool.query(
      `SELECT j.type, a.worker_id, a.outcome FROM job_attempts a JOIN jobs j USING (job_id) WHERE a.job_id = ANY($1)`, [ids]);
    assert.equal(rows.length, ids.length, 'one attempt a job');
    for (const r of rows) {
      assert.equal(r.outcome, 'completed');
      assert.equal(r.worker_id, r.type === 'test.a' ? a.runner.workerId : b.runner.workerId);
    }
  });

  test('a job of a type no running worker handles waits, unclaimed, while the jobs around it run', async (t) => {
    const prefix = uniquePrefix('nohandler');
    const ran: string[] = [];
    const { doorbell } = await makeRunner(t, { prefix, handlers: { 'test.a': (_p, ctx) => void ran.push(ctx.job.id) } });
    // The stranger first: a pop or a poll meets it before the job after it.
    const [stranger] = await ops.jobEnqueue(db.pool, [{ type: 'test.new', queue: prefix }], { doorbell });
    const [known] = await ops.jobEnqueue(db.pool, [{ type: 'test.a', queue: prefix }], { doorbell });
    await waitFor('the known job to complete', async () => (await jobRow(db.pool, known!.id)).status === 'completed', { timeoutMs: 30_000 });
    // One more with no ring: only a claim from PostgreSQL, which meets the older stranger first, finds it.
    const [unrung] = await ops.jobEnqueue(db.pool, [{ type: 'test.a', queue: prefix }]);
    await waitFor('the unrung job to complete', async () => (await jobRow(db.pool, unrung!.id)).status === 'completed', { timeoutMs: 30_000 });
    const row = await jobRow(db.pool, stranger!.id);
    assert.equal(row.status, 'queued', `still waiting for a worker with its handler: ${JSON.stringify(row)}`);
    assert.equal(row.attempt_count, 0, 'no attempt spent');
    assert.deepEqual(ran, [known!.id, unrung!.id]);
  });
});

describe('retention', () => {
  test('the sweep a worker runs deletes finished jobs past their window, and keeps the rest', async (t) => {
    const prefix = uniquePrefix('retention');
    const job = async (status: 'completed' | 'failed', daysAgo: number) => {
      const id = await insertJob(db.pool, { queue: prefix, status });
      await db.pool.query(
        `UPDATE jobs SET finished_at = now() - $2::int * interval '1 day', created_at = now() - $2::int * interval '1 day' WHERE job_id = $1`,
        [id, daysAgo]);
      return id;
    };
    const old = await job('completed', 8);
    const recent = await job('completed', 2);
    const dead = await job('failed', 8);
    const { runner } = await makeRunner(t, { prefix, retention: { completedMs: 7 * 86_400_000, cancelledMs: null, failedMs: null } });
    await waitFor('the old completed job to be deleted', async () => (await jobRow(db.pool, old)) === undefined, { timeoutMs: 30_000 });
    await waitFor('the sweep to count it (leasehold_jobs_pruned_total)', () => runner.stats.pruned === 1);
    assert.notEqual(await jobRow(db.pool, recent), undefined);
    assert.notEqual(await jobRow(db.pool, dead), undefined, 'the dead letter stays: no window for failed jobs');
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

  test('a handler still stopping when the grace ends keeps its job until it has stopped: no other worker can start it meanwhile', async (t) => {
    // It takes a moment to stop (a write to finish), then looks at its job: still its own?
    let statusWhenStopped: string | undefined;
    let stopped!: () => void;
    const settled = new Promise<void>((r) => (stopped = r));
    const { runner, enqueue } = await makeRunner(t, {
      leaseMs: 40_000, // leaseGuardMs: 2 s to stop
      handlers: {
        'test.block': (_p, ctx) =>
          new Promise((_, reject) => {
            ctx.signal.addEventListener('abort', async () => {
              await new Promise((r) => setTimeout(r, 300)); // its own work: the write it finishes
              statusWhenStopped = (await jobRow(db.pool, ctx.job.id)).status as string;
              stopped();
              reject(ctx.signal.reason);
            });
          }),
      },
    });
    const id = await enqueue();
    await waitFor('the job to start', async () => (await jobRow(db.pool, id)).status === 'running');
    await runner.stop(100);
    await settled;
    assert.equal(statusWhenStopped, 'running', 'handed back before its handler had stopped');
    const row = await jobRow(db.pool, id);
    assert.deepEqual([row.status, row.attempt_count, row.max_attempts], ['queued', 1, 4]);
  });

  test('a handler that finishes its work after the abort at the end of the grace completes its job', async (t) => {
    const { runner, enqueue } = await makeRunner(t, {
      leaseMs: 40_000,
      handlers: {
        'test.block': (_p, ctx) =>
          new Promise((resolve) => {
            ctx.signal.addEventListener('abort', () => setTimeout(() => resolve({ finished: true }), 200)); // the last of its work
          }),
      },
    });
    const id = await enqueue();
    await waitFor('the job to start', async () => (await jobRow(db.pool, id)).status === 'running');
    await runner.stop(100);
    const row = await jobRow(db.pool, id);
    assert.deepEqual([row.status, row.attempt_count], ['completed', 1]);
  });

  test('a handler that ignores its abort at the end of the grace does not hold the stop: its job is handed back once leaseGuardMs (2 s at most) has passed', async (t) => {
    const { runner, enqueue } = await makeRunner(t, { leaseMs: 2_000, heartbeatMs: 200, handlers: { 'test.block': () => new Promise(() => {}) } });
    const id = await enqueue();
    await waitFor('the job to start', async () => (await jobRow(db.pool, id)).status === 'running');
    await runner.stop(100);
    assert.equal((await jobRow(db.pool, id)).status, 'queued');
  });

  test('a grace period longer than the lease: the leases are renewed while running jobs finish, and they complete once', async (t) => {
    let finish!: () => void;
    const finished = new Promise<void>((r) => (finish = r));
    const { runner, enqueue } = await makeRunner(t, {
      leaseMs: 1_000,
      heartbeatMs: 200,
      handlers: { 'test.block': () => finished },
    });
    const id = await enqueue();
    await waitFor('the job to start', async () => (await jobRow(db.pool, id)).status === 'running');
    const stopped = runner.stop(60_000);
    // Kept alive by renewals through a whole lease and more after the stop began.
    await waitFor('a renewal more than a lease after the job started', async () =>
      (await db.pool.query(`SELECT heartbeat_at > started_at + interval '1500 milliseconds' AS renewed FROM jobs WHERE job_id = $1`, [id])).rows[0].renewed,
    );
    finish();
    await stopped;
    const row = await jobRow(db.pool, id);
    assert.deepEqual([row.status, row.attempt_count], ['completed', 1]);
    const { rows } = await db.pool.query(`SELECT outcome FROM job_attempts WHERE job_id = $1`, [id]);
    assert.deepEqual(rows.map((r) => r.outcome), ['completed']);
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

describe('claiming through faults', () => {
  /**
   * The runner's pool, with the next `times` runs of a named statement failing as a dropped
   * connection would: before the statement reaches the server (fail), or after it committed
   * (loseAnswer: a timeout, or a connection lost between COMMIT and its answer).
   */
  function faultyPool(t: TestContext) {
    const pool = createPool(db.url, { name: 'faulty', max: 5 });
    t.after(() => pool.end());
    const failing = new Map<string, { left: number; committed: boolean; then?: () => void }>();
    const stalled = new Map<string, { left: number; ms: number }>();
    const proxy = new Proxy(pool, {
      get(target, prop) {
        if (prop === 'query') {
          return (q: unknown, ...rest: unknown[]) => {
            const name = (q as { name?: string })?.name;
            const fault = name ? failing.get(name) : undefined;
            const query = () => (target.query as (...a: unknown[]) => Promise<unknown>)(q, ...rest);
            const stall = name ? stalled.get(name) : undefined;
            if (stall && stall.left > 0) {
              stall.left--;
              return new Promise((r) => setTimeout(r, stall.ms)).then(query);
            }
            if (!fault || fault.left === 0) return query();
            fault.left--;
            const lost = Object.assign(new Error(`injected: ${name} lost its connection`), { code: '57P01' });
            const answer = fault.committed ? query().then(() => Promise.reject(lost)) : Promise.reject(lost);
            return answer.finally(() => void fault.then?.());
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    return {
      pool: proxy,
      fail: (statement: string, times = 1) => failing.set(statement, { left: times, committed: false }),
      /** `then`: called once the caller has its error. */
      loseAnswer: (statement: string, times = 1, then?: () => void) => failing.set(statement, { left: times, committed: true, then }),
      /** The statement reaches the database `ms` late (a stalled server, a wait for a connection). */
      stall: (statement: string, ms: number, times = 1) => stalled.set(statement, { left: times, ms }),
    };
  }

  // Each kind of outcome, on each of its paths: a result to keep (the general path), nothing
  // to keep (the hot path's batch), a handler error (the failure batch).
  const outcomes = [
    { kind: 'a completion with a result', statement: 'leasehold_job_complete', handler: async () => ({ answer: 42 }), status: 'completed' },
    { kind: 'a completion without one', statement: 'leasehold_job_complete', handler: () => undefined, status: 'completed' },
    { kind: 'a failure', statement: 'leasehold_job_fail', handler: () => { throw new PermanentError('no'); }, status: 'failed' },
  ];
  for (const o of outcomes) {
    test(`${o.kind} whose answer was lost after COMMIT: the retry's refusal is recognised as our own earlier write`, async (t) => {
      const { pool, loseAnswer } = faultyPool(t);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-results-'));
      t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const results = new FsResultStore(dir);
      loseAnswer(o.statement);
      const { runner, enqueue } = await makeRunner(t, { pool, results, handlers: { 'test.block': o.handler } });
      const id = await enqueue();
      await waitFor('the job to end its attempt', async () => (await jobRow(db.pool, id)).status === o.status);
      await waitFor('the runner to drop the job', () => runner.inFlight === 0);
      assert.equal(runner.stats.refusedWrites, 0, 'our own committed write was taken for a lost lease');
      const row = await jobRow(db.pool, id);
      if (o.status === 'completed') assert.equal(runner.stats.completed, 1);
      if (o.status === 'failed') assert.equal(runner.stats.failed, 1);
      if (o.kind === 'a completion with a result') {
        assert.ok(row.result_key, 'the job points to its result');
        assert.deepEqual(JSON.parse((await results.get(row.result_key))!.body.toString()), { answer: 42 }, 'the result it points to was deleted');
      }
    });
  }

  test('a claim whose answer was lost after COMMIT: its job is handed back and runs, without spending an attempt', async (t) => {
    const { pool, loseAnswer } = faultyPool(t);
    // Whichever claim takes the job first (from the pop, or the poll) commits and loses its answer.
    for (const st of ['leasehold_job_claim_fresh', 'leasehold_job_claim', 'leasehold_job_claim_next']) loseAnswer(st);
    const ran: string[] = [];
    const { enqueue } = await makeRunner(t, {
      pool,
      handlers: { 'test.block': (_p, ctx) => void ran.push(ctx.job.id) },
      leaseMs: 120_000, // left to expire, the job would sit running far past the deadline below
    });
    const id = await enqueue();
    await waitFor('the job to complete', async () => (await jobRow(db.pool, id)).status === 'completed', { timeoutMs: 30_000 });
    assert.deepEqual(ran, [id], 'it ran once');
    const { rows } = await db.pool.query('SELECT outcome, error FROM job_attempts WHERE job_id = $1 ORDER BY attempt', [id]);
    assert.ok(rows.length >= 2, 'at least one claim was lost');
    assert.equal(rows.at(-1).outcome, 'completed');
    for (const r of rows.slice(0, -1)) assert.deepEqual([r.outcome, r.error], ['aborted', 'claimed by a statement whose answer was lost; handed back without running']);
    const row = await jobRow(db.pool, id);
    assert.equal(row.max_attempts - row.attempt_count, row.attempt_budget - 1, 'only the attempt that ran was spent');
  });

  test('a claim whose answer was lost, its job cancelled meanwhile: the job ends cancelled at once, not when its lease runs out', async (t) => {
    const { pool, loseAnswer } = faultyPool(t);
    let id = '';
    // Once the claim has committed and its answer is lost, an operator cancels the job, still
    // running under the lost claim's lease: the hand-back refuses it (it must not run again).
    const cancel = () => void ops.jobCancel(db.pool, { ids: [id] });
    for (const st of ['leasehold_job_claim_fresh', 'leasehold_job_claim', 'leasehold_job_claim_next']) loseAnswer(st, 1, cancel);
    const ran: string[] = [];
    const { runner, enqueue } = await makeRunner(t, {
      pool,
      handlers: { 'test.block': (_p, ctx) => void ran.push(ctx.job.id) },
      leaseMs: 120_000, // left to expire, the job would sit running far past the deadline below
    });
    id = await enqueue();
    await waitFor('the job to end cancelled', async () => (await jobRow(db.pool, id)).status === 'cancelled', { timeoutMs: 30_000 });
    assert.deepEqual(ran, [], 'it never ran');
    const { rows } = await db.pool.query('SELECT outcome FROM job_attempts WHERE job_id = $1 ORDER BY attempt', [id]);
    assert.deepEqual(rows.map((r) => r.outcome), ['cancelled']);
    await waitFor('the cancel to be counted', () => runner.stats.cancelled === 1);
  });

  test('a claim whose answer was lost just before a stop is handed back by the stop: the job keeps its attempt', async (t) => {
    const { pool, loseAnswer } = faultyPool(t);
    let stopped: Promise<void> | null = null;
    const ran: string[] = [];
    const { runner, enqueue } = await makeRunner(t, { pool, leaseMs: 120_000, handlers: { 'test.block': (_p, ctx) => void ran.push(ctx.job.id) } });
    // The stop comes while the fetch loop waits to look for what the lost claim took.
    for (const st of ['leasehold_job_claim_fresh', 'leasehold_job_claim', 'leasehold_job_claim_next']) loseAnswer(st, 1, () => (stopped ??= runner.stop(0)));
    const id = await enqueue({ maxAttempts: 1 });
    await waitFor('the stop to begin', () => stopped !== null);
    await stopped;
    const row = await jobRow(db.pool, id);
    assert.deepEqual(ran, [], 'it never ran');
    assert.equal(row.status, 'queued', 'handed back, not left running under the stopped worker for the sweep to fail it');
    assert.equal(row.max_attempts - row.attempt_count, 1, 'its one attempt is still to come');
  });

  test('a failure whose answer was lost, then claimed again here while its retry waits: counted once the attempt history shows it recorded', async (t) => {
    const { pool, fail, loseAnswer } = faultyPool(t);
    // The failure commits (retrying, due in a second) and its answer is lost; every retry
    // of it then fails before reaching the database.
    loseAnswer('leasehold_job_fail', 1, () => fail('leasehold_job_fail', 1_000));
    const { runner, enqueue } = await makeRunner(t, {
      pool,
      leaseMs: 6_000, // the retries go on for most of it: the job comes due and is claimed again meanwhile
      handlers: {
        'test.block': (_p, ctx) => {
          if (ctx.attempt === 1) throw new Error('the first attempt fails');
        },
      },
    });
    const id = await enqueue({ maxAttempts: 3 });
    await waitFor('the second attempt to complete', async () => (await jobRow(db.pool, id)).status === 'completed', { timeoutMs: 30_000 });
    const { rows } = await db.pool.query(`SELECT attempt, outcome FROM job_attempts WHERE job_id = $1 ORDER BY attempt`, [id]);
    assert.deepEqual(rows, [{ attempt: 1, outcome: 'retried' }, { attempt: 2, outcome: 'completed' }], 'the lost answer\'s failure committed');
    // The first attempt's failure, recorded by the try whose answer was lost, is counted when
    // this process settles what it could not confirm (two leases on).
    await waitFor('the recorded failure to be counted', () => runner.stats.retried === 1, { timeoutMs: 30_000 });
    assert.equal(runner.stats.completed, 1);
    assert.equal(runner.stats.refusedWrites, 0);
  });

  test('a job that ran but whose outcome could not be recorded is left to the sweep, not handed back as unrun', async (t) => {
    const { pool, fail, loseAnswer } = faultyPool(t);
    const handedBack = 'claimed by a statement whose answer was lost; handed back without running';
    const { runner, enqueue } = await makeRunner(t, {
      pool,
      heartbeatUrl: 'postgres://127.0.0.1:1/nowhere', // no renewal succeeds: the lease runs out locally
      leaseMs: 1_500,
      handlers: { 'test.block': () => undefined },
    });
    fail('leasehold_job_complete', 1_000); // its outcome never reaches the database
    const ran = await enqueue();
    await waitFor('the runner to let the first job go', async () => runner.inFlight === 0 && (await jobRow(db.pool, ran)).status === 'running');
    // Then a claim's answer is lost: the runner looks for jobs leased to it that it does not run.
    for (const st of ['leasehold_job_claim_fresh', 'leasehold_job_claim', 'leasehold_job_claim_next']) loseAnswer(st);
    const unrun = await enqueue();
    const reasons = async (id: string) => (await db.pool.query('SELECT error FROM ended_attempts WHERE job_id = $1', [id])).rows.map((r) => r.error);
    await waitFor('the second job to be handed back', async () => (await reasons(unrun)).includes(handedBack));
    assert.deepEqual(await reasons(ran), [], 'the job that ran is not handed back (its attempt is not given back)');
    assert.equal((await jobRow(db.pool, ran)).status, 'running', 'left for the recover sweep');
  });

  test('a job that ran but whose outcome could not be recorded is not handed back as unrun even leases later, while no sweep has taken it', async (t) => {
    // What a database outage longer than two leases does: no sweep runs, the attempt stays
    // ours in the database, and the first claim after it comes back loses its answer.
    const { pool, fail, loseAnswer } = faultyPool(t);
    const leaseMs = 1_000;
    const { runner, enqueue } = await makeRunner(t, {
      pool,
      heartbeatUrl: 'postgres://127.0.0.1:1/nowhere', // no renewal succeeds: the lease runs out locally
      leaseMs,
      pollMs: 600_000, // no claim from PostgreSQL takes the expired lease over (no sweep either: recoverMs)
      handlers: { 'test.block': () => undefined },
    });
    fail('leasehold_job_complete', 1_000); // its outcome never reaches the database
    const ran = await enqueue();
    await waitFor('the runner to let the job go', async () => runner.inFlight === 0 && (await jobRow(db.pool, ran)).status === 'running');
    await waitFor('three leases to pass since its lease ended, by the database clock', async () => {
      const { rows } = await db.pool.query(`SELECT lease_expires_at < now() - $2::int * interval '1 ms' AS long FROM jobs WHERE job_id = $1`, [ran, 3 * leaseMs]);
      return rows[0].long;
    });
    for (const st of ['leasehold_job_claim_fresh', 'leasehold_job_claim', 'leasehold_job_claim_next']) loseAnswer(st);
    const unrun = await enqueue();
    const reasons = async (id: string) => (await db.pool.query('SELECT error FROM ended_attempts WHERE job_id = $1', [id])).rows.map((r) => r.error);
    await waitFor('the second job to be handed back', async () => (await reasons(unrun)).length > 0);
    assert.deepEqual(await reasons(ran), [], 'the job that ran is not handed back (its attempt is not given back)');
    const row = await jobRow(db.pool, ran);
    assert.deepEqual([row.status, row.attempt_count, row.max_attempts], ['running', 1, 3], 'left for the recover sweep, its attempt spent');
  });

  test('jobs claimed ahead whose hand-back failed are handed back again, not left to wait out their leases and spend an attempt', async (t) => {
    const { pool, fail } = faultyPool(t);
    const prefix = uniquePrefix('handback');
    const quick: Handler = () => undefined;
    fail('leasehold_job_release'); // the first hand-back never reaches the database
    // A: one slot, taken by a job that runs until the test ends, and room to claim 1 ahead
    // (halved to none by the hand-back: its fetch loop then waits for a slot).
    const a = await makeRunner(t, {
      prefix,
      pool,
      concurrency: 1,
      prefetch: 1,
      prefetchHoldMs: 300,
      leaseMs: 4_000,
      handlers: { 'test.block': (_p, ctx) => new Promise((_, no) => ctx.signal.addEventListener('abort', () => no(ctx.signal.reason))), 'test.quick': quick },
    });
    const busy = await a.enqueue();
    await waitFor('A to run the long job', async () => (await jobRow(db.pool, busy)).status === 'running');
    // One attempt: left to wait out its lease, the job would fail without ever running.
    const id = (await ops.jobEnqueue(db.pool, [{ type: 'test.quick', queue: prefix, maxAttempts: 1 }], { doorbell: a.doorbell }))[0]!.id;
    const attempts = async () => (await db.pool.query(`SELECT worker_id, outcome, error FROM job_attempts WHERE job_id = $1 ORDER BY attempt`, [id])).rows;
    await waitFor('A to claim the quick job ahead', async () => (await jobRow(db.pool, id)).worker_id === a.runner.workerId);
    // B: a free slot on the same queue, no prefetch; its sweeps move expired leases on at once.
    const b = await makeRunner(t, { prefix, concurrency: 2, leaseMs: 4_000, recoverMs: 1_000, handlers: { 'test.quick': quick } });
    await waitFor('the quick job to end', async () => ['completed', 'failed'].includes((await jobRow(db.pool, id)).status), { timeoutMs: 30_000 });
    const rows = await attempts();
    assert.deepEqual(rows.at(-1), { worker_id: b.runner.workerId, outcome: 'completed', error: null }, JSON.stringify(rows));
    for (const r of rows.slice(0, -1)) assert.equal(r.outcome, 'aborted', `handed back, not left to expire: ${JSON.stringify(rows)}`);
    const row = await jobRow(db.pool, id);
    assert.equal(row.max_attempts - row.attempt_count, 0, 'only the attempt that ran was spent');
  });

  test('a job claimed ahead whose cancel could not be acknowledged ends cancelled, never run, at the next round: not a lease later as a lost lease', async (t) => {
    const { pool, fail } = faultyPool(t);
    fail('leasehold_job_cancel_ack'); // the first acknowledgement never reaches the database
    // A lease of a minute: the sweep would take it only then, well past the wait below.
    await endedUnstarted(await cancelOneHeldAhead(t, { prefix: uniquePrefix('ackfail'), pool, leaseMs: 60_000 }), 20_000);
  });

  test('a claim that took most of a lease to answer: its jobs run on a renewed lease, not given up by the local clock', async (t) => {
    const { pool, stall } = faultyPool(t);
    const leaseMs = 1_500;
    // The claim reaches the database after nine tenths of a lease: counted from its send,
    // the lease is spent before the job starts; the database's began with the statement.
    for (const st of ['leasehold_job_claim_fresh', 'leasehold_job_claim_next']) stall(st, leaseMs * 0.9);
    const ran: string[] = [];
    const { runner, enqueue } = await makeRunner(t, {
      pool,
      leaseMs,
      heartbeatMs: leaseMs / 3,
      handlers: {
        'test.block': async (_p, ctx) => {
          ran.push(ctx.job.id);
          await new Promise((r) => setTimeout(r, leaseMs / 2)); // longer than the local clock would have left it
        },
      },
    });
    const id = await enqueue({ maxAttempts: 1 });
    await waitFor('the job to complete', async () => (await jobRow(db.pool, id)).status === 'completed', { timeoutMs: 30_000 });
    assert.deepEqual(ran, [id]);
    assert.equal(runner.stats.leaseLost, 0);
  });

  test('jobs a round claimed before a later statement of it failed are run, not dropped', async (t) => {
    const { pool, fail } = faultyPool(t);
    const limited = uniquePrefix('limited');
    const fast = uniquePrefix('fast');
    await ops.queueSetControls(db.pool, { name: limited, concurrencyLimit: 10 });
    t.after(() => ops.queueSetControls(db.pool, { name: limited, concurrencyLimit: 0 }));
    const ids = (await ops.jobEnqueue(db.pool, [{ type: 'test.ok', queue: limited }, { type: 'test.ok', queue: limited }])).map((r) => r.id);
    // The first round claims the limited queue's jobs, then fails on the fast queue's claim.
    fail('leasehold_job_claim_next');
    const ran: string[] = [];
    const { runner } = await makeRunner(t, {
      pool,
      queues: [limited, fast],
      handlers: { 'test.ok': (_p, ctx) => void ran.push(ctx.job.id) },
      leaseMs: 120_000, // a dropped job would sit running far past the deadline below
    });
    for (const id of ids) {
      await waitFor(`job ${id} to complete`, async () => (await jobRow(db.pool, id)).status === 'completed', { timeoutMs: 30_000 });
    }
    assert.deepEqual(ran.sort(), [...ids].sort());
    assert.equal(runner.stats.claimed, 2);
  });

  test('Redis answering pops with an error (not a lost connection): the worker claims from PostgreSQL', async (t) => {
    const prefix = uniquePrefix('wrongtype');
    const queue = prefix;
    const redis = new Redis(REDIS_URL);
    const key = queueKey(prefix, queue);
    t.after(async () => {
      await redis.del(key);
      redis.disconnect();
    });
    // Every pop on the queue's key fails (WRONGTYPE) while the connection stays up, as
    // with a full disk (MISCONF) or a replica after a failover (READONLY).
    await redis.set(key, 'not a list');
    const ran: string[] = [];
    const { doorbell } = await makeRunner(t, {
      prefix,
      handlers: { 'test.ok': (_p, ctx) => void ran.push(ctx.job.id) },
      pollMs: 60_000, // no periodic claim from PostgreSQL: only LISTEN can wake it in time
    });
    await waitFor('the runner to listen on PostgreSQL', async () =>
      (await db.pool.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN leasehold_wakeup' AND state = 'idle'`)).rowCount,
    { timeoutMs: 30_000 });
    // The producer's push fails the same way, so it rings with NOTIFY.
    const [job] = await ops.jobEnqueue(db.pool, [{ type: 'test.ok', queue }], { doorbell });
    await waitFor('the job to complete', async () => (await jobRow(db.pool, job!.id)).status === 'completed', { timeoutMs: 30_000 });
    assert.deepEqual(ran, [job!.id]);
  });

  test('a due job with no id in Redis is claimed within a poll interval, while the list still holds ids', async (t) => {
    const ran: string[] = [];
    const prefix = uniquePrefix('backstop');
    const queue = prefix;
    await makeRunner(t, {
      prefix,
      handlers: { 'test.ok': (_p, ctx) => void ran.push(ctx.job.id) },
      pollMs: 300,
    });
    const key = queueKey(prefix, queue);
    const redis = new Redis(REDIS_URL);
    t.after(async () => {
      await redis.del(key);
      redis.disconnect();
    });
    // Steady traffic's signal: ids of jobs that are not (there) to be claimed, never running out
    // before the deadline. A pop always returns some; the runner never sees an empty list.
    const bogus = Array.from({ length: 200_000 }, (_, k) => String(9_000_000_000 + k));
    for (let k = 0; k < bogus.length; k += 10_000) await redis.rpush(key, ...bogus.slice(k, k + 10_000));
    const [job] = await ops.jobEnqueue(db.pool, [{ type: 'test.ok', queue }]); // its ring was lost
    await waitFor('the job to complete', async () => (await jobRow(db.pool, job!.id)).status === 'completed', { timeoutMs: 30_000 });
    const left = await redis.llen(key);
    assert.ok(left > 0, 'claimed while the list still held ids (not once it drained)');
    console.log(`# claimed with ${left} ids still in the list`);
  });
});

describe("the worker's Redis connection reset under a blocking pop", () => {
  test('the worker pops again on the new connection at once: a job rung then starts without waiting for a poll interval', async (t) => {
    const admin = new Redis(REDIS_URL);
    t.after(() => admin.disconnect());
    const started = new Set<string>();
    const { receiver, enqueue } = await makeRunner(t, {
      pollMs: 120_000, // the backstop poll and a LISTEN wait would each take that long
      handlers: { 'test.block': (_p, ctx) => void started.add(ctx.job.id) },
    });
    const first = await enqueue();
    await waitFor('a first job to start', () => started.has(first));
    // The receiver's connection, told by its local address (a command sent on it would wait
    // behind the pop).
    const socket = () => (receiver.redis as unknown as { stream: { localPort?: number } }).stream.localPort;
    const addr = `127.0.0.1:${socket()}`;
    await waitFor('the worker to block in a pop', async () => ((await admin.client('LIST')) as string).split('\n').some((l) => l.includes(` addr=${addr} `) && l.includes(' cmd=blmpop')));
    // A reset with Redis up (CLIENT KILL: as a proxy's, a load balancer's or a NAT's reset).
    await admin.client('KILL', 'ADDR', addr);
    await waitFor('the receiver to connect again', () => receiver.available && `127.0.0.1:${socket()}` !== addr);
    const second = await enqueue(); // rung through Redis only: the doorbell's connection was not reset
    await waitFor('the job rung after the reset to start', () => started.has(second), { timeoutMs: 30_000 });
  });
});

describe('what the list holds', () => {
  test('entries that are not job ids (written by hand, another program on the prefix) are dropped; the ids popped with them are claimed', async (t) => {
    const prefix = uniquePrefix('junk');
    const queue = prefix;
    // Enqueued with no ring; the list gets their ids between entries a claim cannot take.
    const ids = (await ops.jobEnqueue(db.pool, Array.from({ length: 3 }, () => ({ type: 'test.ok', queue })))).map((r) => r.id);
    const key = queueKey(prefix, queue);
    const redis = new Redis(REDIS_URL);
    t.after(async () => {
      await redis.del(key);
      redis.disconnect();
    });
    await redis.rpush(key, 'abc', ids[0]!, '99999999999999999999', ids[1]!, '', ids[2]!, '-4', '0x10');
    // Nothing else rings them: no sweep (another process holds its lock), no claim from PostgreSQL.
    const sweeper = await db.pool.connect();
    await sweeper.query(`SELECT pg_advisory_lock(hashtext('leasehold.recover'))`);
    t.after(async () => {
      await sweeper.query(`SELECT pg_advisory_unlock(hashtext('leasehold.recover'))`);
      sweeper.release();
    });
    await makeRunner(t, { prefix, handlers: { 'test.ok': () => {} }, pollMs: 600_000 });
    await waitFor('the three jobs to complete', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = $1 AND status = 'completed'`, [queue])).rows[0].n === 3,
    { timeoutMs: 30_000 });
    assert.equal(await redis.llen(key), 0);
  });
});

describe('signals held in hand', () => {
  test('ids popped beyond the free slots go back to the front of the list, in order, when the slots stay busy', async (t) => {
    const prefix = uniquePrefix('held');
    const queue = prefix;
    const block: Handler = (_p, ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
    const { runner, doorbell } = await makeRunner(t, {
      prefix,
      concurrency: 2,
      handlers: { 'test.ok': () => {}, 'test.block': block },
      heldSignalsMs: 10_000, // long enough to see them held, on a loaded machine too
      pollMs: 60_000, // every claim from a pop: no claim straight from PostgreSQL in between
    });
    const key = queueKey(prefix, queue);
    const redis = new Redis(REDIS_URL);
    t.after(async () => {
      await redis.del(key);
      redis.disconnect();
    });
    // Two quick jobs fill the first pop (2 free slots: the list is long), so the next pop
    // takes 2 + HELD_SIGNALS_PER_SLOT × 2 ids: two jobs that then hold both slots, and 8 held.
    const types = ['test.ok', 'test.ok', ...Array.from({ length: 12 }, () => 'test.block')];
    const ids = (await ops.jobEnqueue(db.pool, types.map((type) => ({ type, queue })), { doorbell })).map((r) => r.id);
    // (Not merely two running: the quick jobs are running for a moment too.)
    await waitFor('both slots to be busy with blocking jobs', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = $1 AND status = 'running' AND type = 'test.block'`, [queue])).rows[0].n === 2);
    const waiting = (await db.pool.query(`SELECT job_id::text AS id FROM jobs WHERE queue = $1 AND status = 'queued' ORDER BY job_id`, [queue])).rows.map((r) => r.id);
    assert.equal(waiting.length, 10);
    assert.equal(runner.heldSignals, 8, 'the second pop took 2 + 4 × 2 ids and claimed 2');
    assert.equal(await redis.llen(key), 2);
    // Held for heldSignalsMs at most: then the list holds every waiting job's id, oldest first.
    await waitFor('the held ids to be given back', async () => (await redis.llen(key)) === waiting.length, { timeoutMs: 30_000 });
    assert.deepEqual(await redis.lrange(key, 0, -1), waiting);
    assert.deepEqual(waiting, ids.slice(4));
    assert.equal(runner.heldSignals, 0);
  });

  test('held ids that do not fill the free slots are claimed with more from the list, in one statement', async (t) => {
    const prefix = uniquePrefix('held-topup');
    const queue = prefix;
    // C = 1, prefetch 19: a claim comes when at most 9 jobs are buffered, so it wants 10-20
    // jobs, more than the 4 ids (HELD_SIGNALS_PER_SLOT × C) a pop holds back.
    const { doorbell } = await makeRunner(t, { prefix, concurrency: 1, prefetch: 19, handlers: { 'test.ok': () => {} }, pollMs: 60_000 });
    const ids = (await ops.jobEnqueue(db.pool, Array.from({ length: 240 }, () => ({ type: 'test.ok', queue })), { doorbell })).map((r) => r.id);
    await waitFor('every job to complete', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = $1 AND status = 'completed'`, [queue])).rows[0].n === ids.length,
    { timeoutMs: 60_000 });
    // The jobs one statement claimed share its started_at (now(), the transaction's start).
    const claims = (await db.pool.query(
      `SELECT count(*)::int AS n FROM jobs WHERE queue = $1 GROUP BY started_at ORDER BY started_at`, [queue])).rows.map((r) => r.n as number);
    console.log(`# jobs per claim statement: ${claims.join(' ')}`);
    // Before the top-up, every other claim carried the 4 held ids alone. Only the last claims
    // may be small: the list runs out.
    const small = claims.slice(0, -2).filter((n) => n <= 4);
    assert.deepEqual(small, [], `claims of the held ids alone: ${claims.join(' ')}`);
  });
});

/**
 * The handler was told to stop before the database's lease ended, while no other worker
 * could take the job yet (the row still holds the lease the claim took: nothing renewed it).
 * Both clocks are this machine's.
 */
async function abortedWhileStillLeased(id: string, rec: Blocked) {
  const row = (await db.pool.query(`SELECT status, extract(epoch FROM lease_expires_at) * 1000 AS lease_end FROM jobs WHERE job_id = $1`, [id])).rows[0];
  assert.equal(row.status, 'running');
  const ahead = Number(row.lease_end) - rec.abortedAt!;
  assert.ok(ahead > 0, `aborted ${-ahead} ms after the database's lease ended`);
  console.log(`# aborted ${ahead.toFixed(0)} ms before the database's lease ended`);
}

describe('lease watchdog', () => {
  test('without renewals, a handler is aborted before its lease ends in the database, not at the next heartbeat tick', async (t) => {
    const { seen, enqueue, runner } = await makeRunner(t, {
      leaseMs: 10_000, // its guard (500 ms) outlasts a late timer on a busy machine
      heartbeatMs: 60_000, // no renewal (and no heartbeat tick) before the lease ends
    });
    const id = await enqueue();
    const rec = await waitFor('the handler to abort', () => seen.get(id)?.abortedAt && seen.get(id), { timeoutMs: 30_000 });
    assert.equal(rec.abortReason, 'lease_expired_locally');
    assert.equal(rec.abortTick, 0, 'aborted before any heartbeat tick');
    assert.ok(rec.abortedAt! - rec.started >= 8_000, `aborted ${rec.abortedAt! - rec.started} ms after start, long before the lease's end`);
    await abortedWhileStillLeased(id, rec);
    await waitFor('the runner to drop the job', () => runner.inFlight === 0);
  });
});

describe('lease watchdog, while renewals wait for a connection', () => {
  test('a job given up while its renewal waited is not renewed once the connection comes: its lease ends when it would have', async (t) => {
    const { seen, enqueue, runner, heartbeatPool } = await makeRunner(t, { leaseMs: 4_000, heartbeatMs: 200 });
    // One attempt: once its lease ends, no claim (this runner's backstop poll) takes the job
    // over under a new lease, which would move the lease's end for another reason.
    const id = await enqueue({ maxAttempts: 1 });
    await waitFor('the job to start and its lease to be renewed', () => seen.has(id) && runner.heartbeatAnswers >= 2, { timeoutMs: 30_000 });
    // Both of the heartbeat pool's connections taken: the next renewal waits for one (its
    // wait, at most CONNECT_TIMEOUT_MS, outlasts the watchdog's give-up after ~3.5 s).
    const held = [await heartbeatPool.connect(), await heartbeatPool.connect()];
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      for (const c of held) c.release();
    };
    t.after(release);
    const rec = await waitFor('the watchdog to give the job up', () => seen.get(id)?.abortedAt && seen.get(id), { timeoutMs: 30_000 });
    assert.equal(rec.abortReason, 'lease_expired_locally');
    const lease = async () => {
      const row = await jobRow(db.pool, id);
      return { end: row.lease_expires_at?.getTime(), attempt: row.attempt_count, worker: row.worker_id };
    };
    const before = await lease();
    const worker = async () => (await db.pool.query(`SELECT heartbeat_at FROM workers WHERE worker_id = $1`, [runner.workerId])).rows[0].heartbeat_at.getTime();
    const reportedBefore = await worker();
    release();
    // Two reports of the worker row after the release: the waiting renewal went with the first
    // tick's (one heartbeat at a time), so it has answered by the second.
    const first = await waitFor('a report after the release', async () => ((await worker()) > reportedBefore ? worker() : null), { timeoutMs: 30_000 });
    await waitFor('a second report', async () => (await worker()) > first, { timeoutMs: 30_000 });
    const after = await lease();
    assert.deepEqual({ attempt: after.attempt, worker: after.worker }, { attempt: before.attempt, worker: before.worker }, 'the same attempt');
    assert.equal(after.end, before.end, 'the lease of a job given up was extended by a renewal sent after it');
  });
});

describe('an operator cancel the worker has not heard of yet', () => {
  test('a handler error after it ends the job cancelled, not retrying', async (t) => {
    let fail!: () => void;
    const failing = new Promise<void>((r) => (fail = r));
    const { enqueue, runner } = await makeRunner(t, {
      heartbeatMs: 60_000, // the cancel request is not seen by a heartbeat before the handler fails
      handlers: {
        'test.block': async () => {
          await failing;
          throw new Error('the handler failed');
        },
      },
    });
    const id = await enqueue();
    await waitFor('the job to run', async () => (await jobRow(db.pool, id)).status === 'running');
    assert.equal((await ops.jobCancel(db.pool, { ids: [id] })).items[0]!.outcome, 'cancel_requested');
    fail();
    await waitFor('the job to end', async () => (await jobRow(db.pool, id)).status !== 'running');
    const row = await jobRow(db.pool, id);
    assert.equal(row.status, 'cancelled');
    assert.equal(row.error, 'the handler failed');
    const { rows } = await db.pool.query('SELECT outcome, error FROM job_attempts WHERE job_id = $1', [id]);
    assert.deepEqual(rows, [{ outcome: 'cancelled', error: 'the handler failed' }]);
    assert.equal(runner.stats.cancelled, 1);
  });

  test('a shutdown ends it cancelled (the release refuses it), not running until its lease expires', async (t) => {
    const { runner, seen, enqueue } = await makeRunner(t, { heartbeatMs: 60_000 });
    const id = await enqueue();
    await waitFor('the job to start', () => seen.get(id));
    assert.equal((await ops.jobCancel(db.pool, { ids: [id] })).items[0]!.outcome, 'cancel_requested');
    await runner.stop(0);
    const row = await jobRow(db.pool, id);
    assert.equal(row.status, 'cancelled');
    const { rows } = await db.pool.query('SELECT outcome FROM job_attempts WHERE job_id = $1', [id]);
    assert.deepEqual(rows, [{ outcome: 'cancelled' }]);
  });
});

/**
 * Handlers that record the jobs they run: `test.gate` holds its slot until release(),
 * `test.ok` returns at once.
 */
function gatedHandlers() {
  const ran: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const handlers: Record<string, Handler> = {
    'test.gate': async (_p, ctx) => {
      ran.push(ctx.job.id);
      await gate;
    },
    'test.ok': (_p, ctx) => void ran.push(ctx.job.id),
  };
  return { ran, release, handlers };
}

describe('quieted by an operator', () => {
  test('a quiet worker claims nothing new and pops no id, finishes the job in hand, and claims again once resumed', async (t) => {
    const prefix = uniquePrefix('quiet');
    const queue = prefix;
    const { ran, release, handlers } = gatedHandlers();
    const { runner, doorbell } = await makeRunner(t, {
      prefix,
      pollMs: 200,
      handlers,
    });
    const [inHand] = await ops.jobEnqueue(db.pool, [{ type: 'test.gate', queue }], { doorbell });
    await waitFor('the job in hand to start', () => ran.includes(inHand!.id));
    assert.deepEqual(await ops.workerSetQuiet(db.pool, { workerIds: [runner.workerId], quiet: true, by: 'test' }), [runner.workerId]);
    const reported = async () => (await db.pool.query(`SELECT metrics->'quiet' AS q FROM workers WHERE worker_id = $1`, [runner.workerId])).rows[0]?.q;
    await waitFor('the worker to report itself quiet', async () => (await listWorkers(db.pool)).find((w) => w.workerId === runner.workerId)?.quietSeen === true);
    const [waiting] = await ops.jobEnqueue(db.pool, [{ type: 'test.ok', queue }], { doorbell });
    // Chances to claim it: five polls of PostgreSQL and three heartbeats since the enqueue.
    const ticks = runner.heartbeatTicks;
    const since = Date.now();
    await waitFor('three heartbeats and five poll intervals', () => runner.heartbeatTicks >= ticks + 3 && Date.now() - since > 5 * 200);
    assert.equal((await jobRow(db.pool, waiting!.id)).status, 'queued', 'not claimed while quiet');
    const redis = new Redis(REDIS_URL);
    t.after(() => redis.disconnect());
    assert.equal(await redis.llen(queueKey(prefix, queue)), 1, 'its ring left in Redis for the other workers');
    // The job in hand finishes, its lease renewed meanwhile.
    release();
    await waitFor('the job in hand to complete', async () => (await jobRow(db.pool, inHand!.id)).status === 'completed');
    assert.equal((await jobRow(db.pool, waiting!.id)).status, 'queued');
    // Resumed: the waiting job runs.
    assert.deepEqual(await ops.workerSetQuiet(db.pool, { workerIds: [runner.workerId], quiet: false, by: 'test' }), [runner.workerId]);
    await waitFor('the waiting job to complete once resumed', async () => (await jobRow(db.pool, waiting!.id)).status === 'completed');
    // Its report named the request when it was sent (the heartbeat that brought the resume): the next one says it claims.
    await waitFor('the worker to report itself claiming again', async () => (await reported()) === false);
    // Quieting a quiet worker (or resuming one that claims) changes nothing; a stopped one is not quieted.
    assert.deepEqual(await ops.workerSetQuiet(db.pool, { workerIds: [runner.workerId], quiet: false, by: 'test' }), []);
    await runner.stop(0);
    assert.deepEqual(await ops.workerSetQuiet(db.pool, { workerIds: [runner.workerId], quiet: true, by: 'test' }), []);
  });

  test('a pop under way when the quiet arrives claims nothing: the id it returns goes back to Redis for the others', async (t) => {
    const prefix = uniquePrefix('quiet-pop');
    const ran: string[] = [];
    // A long poll period: an idle runner waits up to 5 s in each blocking pop.
    const { runner, doorbell } = await makeRunner(t, { prefix, pollMs: 5_000, handlers: { 'test.ok': (_p, ctx) => void ran.push(ctx.job.id) } });
    const ticks0 = runner.heartbeatTicks;
    await waitFor('the runner to idle in its pop', () => runner.heartbeatTicks >= ticks0 + 2);
    await ops.workerSetQuiet(db.pool, { workerIds: [runner.workerId], quiet: true, by: 'test' });
    await waitFor('the runner to confirm the quiet', async () => (await listWorkers(db.pool)).find((w) => w.workerId === runner.workerId)?.quietSeen === true);
    const [job] = await ops.jobEnqueue(db.pool, [{ type: 'test.ok', queue: prefix }], { doorbell });
    const ticks = runner.heartbeatTicks;
    await waitFor('two heartbeats since the ring', () => runner.heartbeatTicks >= ticks + 2);
    assert.deepEqual(ran, [], 'not run while quiet');
    assert.equal((await jobRow(db.pool, job!.id)).status, 'queued');
    const redis = new Redis(REDIS_URL);
    t.after(() => redis.disconnect());
    assert.deepEqual(await redis.lrange(queueKey(prefix, prefix), 0, -1), [job!.id], 'its ring is in Redis for the other workers');
  });

  test('jobs a quieted worker claimed ahead and has not started go back to their queue, their attempts given back', async (t) => {
    const prefix = uniquePrefix('quiet-ahead');
    const { ran, release, handlers } = gatedHandlers();
    const { runner, doorbell } = await makeRunner(t, {
      prefix,
      concurrency: 1,
      prefetch: 2,
      handlers,
    });
    const [inHand] = await ops.jobEnqueue(db.pool, [{ type: 'test.gate', queue: prefix }], { doorbell });
    await waitFor('the job in hand to start', () => ran.includes(inHand!.id));
    const ahead = (await ops.jobEnqueue(db.pool, [{ type: 'test.ok', queue: prefix, maxAttempts: 2 }, { type: 'test.ok', queue: prefix, maxAttempts: 2 }], { doorbell })).map((r) => r.id);
    await waitFor('both to be claimed ahead, waiting for the busy slot', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND worker_id = $2 AND status = 'running'`, [ahead, runner.workerId])).rows[0].n === 2);
    assert.deepEqual(ran, [inHand!.id]);
    await ops.workerSetQuiet(db.pool, { workerIds: [runner.workerId], quiet: true, by: 'test' });
    await waitFor('the jobs claimed ahead to be handed back', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND status = 'queued' AND max_attempts - attempt_count = 2`, [ahead])).rows[0].n === 2);
    const { rows } = await db.pool.query(`SELECT outcome, error FROM ended_attempts WHERE job_id = ANY($1)`, [ahead]);
    assert.deepEqual(rows.map((r) => r.outcome), ['aborted', 'aborted']);
    for (const r of rows) assert.match(r.error, /quieted by an operator/);
    assert.equal((await jobRow(db.pool, inHand!.id)).status, 'running', 'the job in hand runs on');
    release();
    await ops.workerSetQuiet(db.pool, { workerIds: [runner.workerId], quiet: false, by: 'test' });
    await waitFor('every job to complete once resumed', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND status = 'completed'`, [[inHand!.id, ...ahead]])).rows[0].n === 3);
  });

  test('jobs claimed ahead from a queue that is then paused go back to it unrun, and start only once it is resumed', async (t) => {
    const prefix = uniquePrefix('pause-ahead');
    const { ran, release, handlers } = gatedHandlers();
    const { runner, doorbell } = await makeRunner(t, { prefix, concurrency: 1, prefetch: 2, handlers });
    const [inHand] = await ops.jobEnqueue(db.pool, [{ type: 'test.gate', queue: prefix }], { doorbell });
    await waitFor('the job in hand to start', () => ran.includes(inHand!.id));
    const ahead = (await ops.jobEnqueue(db.pool, [{ type: 'test.ok', queue: prefix, maxAttempts: 2 }, { type: 'test.ok', queue: prefix, maxAttempts: 2 }], { doorbell })).map((r) => r.id);
    await waitFor('both to be claimed ahead, waiting for the busy slot', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND worker_id = $2 AND status = 'running'`, [ahead, runner.workerId])).rows[0].n === 2);
    await ops.queueSetControls(db.pool, { name: prefix, paused: true });
    await waitFor('the jobs claimed ahead to be handed back', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND status = 'queued' AND max_attempts - attempt_count = 2`, [ahead])).rows[0].n === 2);
    const { rows } = await db.pool.query(`SELECT outcome, error FROM ended_attempts WHERE job_id = ANY($1)`, [ahead]);
    assert.deepEqual(rows.map((r) => r.outcome), ['aborted', 'aborted']);
    for (const r of rows) assert.match(r.error, /queue was paused/);
    // The slot frees while the queue is paused: nothing starts on it.
    release();
    await waitFor('the job in hand to complete', async () => (await jobRow(db.pool, inHand!.id)).status === 'completed');
    assert.deepEqual(ran, [inHand!.id], 'no job of the paused queue started');
    await ops.queueSetControls(db.pool, { name: prefix, paused: false });
    await waitFor('the two to complete once resumed', async () =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1) AND status = 'completed'`, [ahead])).rows[0].n === 2);
  });

  test('a claim round under way when the quiet arrives sends no claim after it, and the quiet is acknowledged once that round is over', async (t) => {
    const prefix = uniquePrefix('quiet-round');
    const limited = `${prefix}-limited`;
    await ops.queueSetControls(db.pool, { name: limited, concurrencyLimit: 5 });
    // The test holds the limited queue's lock: the runner's claim from it waits there, mid-round.
    const blocker = await db.pool.connect();
    let blocked = true;
    await blocker.query('BEGIN');
    await blocker.query(`SELECT name FROM queues WHERE name = $1 FOR UPDATE`, [limited]);
    const unblock = async () => {
      if (!blocked) return;
      blocked = false;
      await blocker.query('COMMIT');
    };
    t.after(async () => {
      await unblock();
      blocker.release();
    });
    const ran: string[] = [];
    const { runner } = await makeRunner(t, { prefix, queues: [limited, prefix], handlers: { 'test.ok': (_p, ctx) => void ran.push(ctx.job.id) } });
    await waitFor('the runner to wait for the limited queue\'s lock', async () =>
      (await db.pool.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM queues WHERE name = $1 FOR UPDATE%' AND pid <> pg_backend_pid()`,
      )).rows[0].n >= 1);
    await ops.workerSetQuiet(db.pool, { workerIds: [runner.workerId], quiet: true, by: 'test' });
    const ticks = runner.heartbeatTicks;
    await waitFor('two heartbeats to read the quiet', () => runner.heartbeatTicks >= ticks + 2);
    const me = async () => (await listWorkers(db.pool)).find((w) => w.workerId === runner.workerId)!;
    assert.equal((await me()).quietSeen, false, 'not acknowledged while a claim begun before it is under way');
    // A job of the other queue, due, unrung: only a claim straight from PostgreSQL finds it.
    const [job] = await ops.jobEnqueue(db.pool, [{ type: 'test.ok', queue: prefix }]);
    await unblock();
    await waitFor('the quiet to be acknowledged once the round is over', async () => (await me()).quietSeen === true);
    const after = runner.heartbeatTicks;
    await waitFor('two heartbeats more', () => runner.heartbeatTicks >= after + 2);
    assert.deepEqual([...ran], [], 'nothing claimed after the quiet, by the round under way or later');
    assert.equal((await jobRow(db.pool, job!.id)).status, 'queued');
    await ops.workerSetQuiet(db.pool, { workerIds: [runner.workerId], quiet: false, by: 'test' });
    await waitFor('the job to run once resumed', () => ran.includes(job!.id));
  });
});

describe('what a heartbeat reports', () => {
  test('per queue and job type: the outcomes and run times of its attempts, which the console and /api/metrics sum', async (t) => {
    const prefix = uniquePrefix('bytype');
    const { runner, doorbell } = await makeRunner(t, {
      prefix,
      handlers: {
        'test.ok': () => 'done',
        'test.flaky': () => {
          throw new Error('not yet');
        },
        'test.bad': () => {
          throw new PermanentError('never');
        },
      },
    });
    const enqueue = (type: string, n: number, maxAttempts = 3) =>
      ops.jobEnqueue(db.pool, Array.from({ length: n }, () => ({ type, queue: prefix, maxAttempts })), { doorbell });
    await enqueue('test.ok', 3);
    await enqueue('test.flaky', 1, 2); // retried once, then to the dead letter
    await enqueue('test.bad', 2);
    const byType = async () => {
      const { rows } = await db.pool.query(`SELECT metrics->'byType' AS t FROM workers WHERE worker_id = $1`, [runner.workerId]);
      return (rows[0]?.t ?? []) as { queue: string; type: string; completed: number; retried: number; failed: number; cancelled: number; runTimeMs: { count: number } }[];
    };
    const of = (rows: Awaited<ReturnType<typeof byType>>, type: string) => rows.find((r) => r.type === type && r.queue === prefix);
    await waitFor('a heartbeat with every outcome', async () => (of(await byType(), 'test.flaky')?.failed ?? 0) === 1 && (of(await byType(), 'test.ok')?.completed ?? 0) === 3);
    const reported = await byType();
    assert.deepEqual(
      ['test.ok', 'test.flaky', 'test.bad'].map((type) => {
        const r = of(reported, type)!;
        return [type, r.completed, r.retried, r.failed, r.cancelled, r.runTimeMs.count];
      }),
      [
        ['test.ok', 3, 0, 0, 0, 3],
        ['test.flaky', 0, 1, 1, 0, 2],
        ['test.bad', 0, 0, 2, 0, 2],
      ],
    );
    // The process-wide counters are the sums of the per-type ones.
    const sum = (k: 'completed' | 'retried' | 'failed') => reported.reduce((n, r) => n + r[k], 0);
    assert.deepEqual([sum('completed'), sum('retried'), sum('failed')], [runner.stats.completed, runner.stats.retried, runner.stats.failed]);
    // What the console and the scrape read: the same, summed over the worker rows.
    const summed = (await readTypeTotals(db.pool)).filter((r) => r.queue === prefix);
    assert.deepEqual(
      summed.map((r) => [r.type, r.completed, r.retried, r.failed, r.runTimeMs.count, r.runTimeMs.counts.reduce((a, b) => a + b, 0)]),
      [
        ['test.bad', 0, 0, 2, 2, 2],
        ['test.flaky', 0, 1, 1, 2, 2],
        ['test.ok', 3, 0, 0, 3, 3],
      ],
    );
  });

  test("a lost lease its sweep recovered counts against the job's type and queue, on any queue (a dead worker's job on one this process does not consume)", async (t) => {
    const prefix = uniquePrefix('bytype-lost');
    const elsewhere = `${prefix}-other`;
    const ids = [
      await insertJob(db.pool, { queue: elsewhere, type: 'test.poison', status: 'running', workerId: 'gone:1:dead01', leaseInMs: -1_000 }),
      await insertJob(db.pool, { queue: elsewhere, type: 'test.poison', status: 'running', workerId: 'gone:1:dead01', leaseInMs: -1_000 }),
    ];
    const { runner } = await makeRunner(t, { prefix, recoverMs: 200 });
    const lost = async () => {
      const { rows } = await db.pool.query(`SELECT metrics->'byType' AS t FROM workers WHERE worker_id = $1`, [runner.workerId]);
      return ((rows[0]?.t ?? []) as { queue: string; type: string; leaseLost?: number }[]).find((r) => r.queue === elsewhere && r.type === 'test.poison')?.leaseLost ?? 0;
    };
    await waitFor('a heartbeat with both lost leases', async () => (await lost()) === 2);
    for (const id of ids) assert.equal((await jobRow(db.pool, id)).status, 'retrying');
    const summed = (await readTypeTotals(db.pool)).find((r) => r.queue === elsewhere && r.type === 'test.poison');
    assert.equal(summed?.leaseLost, 2);
  });

  test("the process's resident memory, for the workers page", async (t) => {
    const { runner } = await makeRunner(t);
    const rss = async () => Number((await db.pool.query(`SELECT metrics->>'rssBytes' AS rss FROM workers WHERE worker_id = $1`, [runner.workerId])).rows[0]?.rss);
    // A Node process with pg and ioredis loaded holds tens of MB; under 4 GB on these machines.
    await waitFor('a heartbeat with the memory', async () => (await rss()) > 20 * 2 ** 20);
    assert.ok((await rss()) < 4 * 2 ** 30);
  });
});
