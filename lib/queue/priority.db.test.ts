/**
 * Job priority against a real PostgreSQL and Redis: 0 runs first, 9 last, and within a level
 * the oldest due job — in every claim path (by ids from the Redis lists, from PostgreSQL, under
 * a queue's limits), in the signal's lists, and through the recover sweep's repair.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { Redis } from 'ioredis';
import { createLogger } from '../log';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { uniquePrefix } from '../../test/processes';
import { unlinkMatching } from '../../test/redis-keys';
import { waitFor } from '../../test/wait';
import { createPool } from '../db/client';
import { Runner } from '../../worker/runner';
import * as ops from './ops';
import { type Doorbell, PgDoorbell, queueKey, RedisDoorbell, RedisReceiver } from './signal';

const db = await testDatabase();
const log = createLogger({ test: 'priority' });
const claim = { workerId: 'w-prio', leaseMs: 30_000 };

/** Enqueues one job per priority given, in that order, without ringing; returns their ids. */
const enqueue = async (queue: string, priorities: number[], extra: Partial<ops.EnqueueInput> = {}) =>
  (await ops.jobEnqueue(db.pool, priorities.map((priority, i) => ({ type: 'demo.noop', queue, priority, payload: { i }, ...extra })))).map((r) => r.id);

const jobRowStatus = async (id: string) => (await db.pool.query(`SELECT status FROM jobs WHERE job_id = $1`, [id])).rows[0].status as string;

const priorityOf = async (ids: string[]) => {
  const { rows } = await db.pool.query(`SELECT job_id::text AS id, priority FROM jobs WHERE job_id = ANY($1::bigint[])`, [ids]);
  const by = new Map(rows.map((r) => [r.id as string, r.priority as number]));
  return ids.map((id) => by.get(id));
};

function redisFor(t: TestContext, prefix: string) {
  const redis = new Redis(REDIS_URL);
  t.after(async () => {
    await unlinkMatching(redis, `${prefix}:*`);
    redis.disconnect();
  });
  return redis;
}

test('a claim from PostgreSQL takes the lowest priority number first, and the oldest within a level — past a level of jobs not due yet', async () => {
  const queue = uniquePrefix('prio-pg');
  // Level 0 holds a backlog due tomorrow: a claim must not stop at it (nor read through it).
  await enqueue(queue, Array(50).fill(0), { runAt: new Date(Date.now() + 86_400_000) });
  const [late5, first3, second3, only0, last9] = await enqueue(queue, [5, 3, 3, 0, 9]);
  const order: string[] = [];
  for (let k = 0; k < 5; k++) order.push(...(await ops.jobClaimNext(db.pool, { ...claim, queue, limit: 1 })).map((j) => j.id));
  assert.deepEqual(order, [only0, first3, second3, late5, last9]);
  assert.deepEqual(await ops.jobClaimNext(db.pool, { ...claim, queue, limit: 10 }), [], 'the level-0 jobs are not due');
});

test('a claim walks past the rows a racing claimer holds, within a level and into the next', async () => {
  const queue = uniquePrefix('prio-race');
  const first = await enqueue(queue, Array(40).fill(0));
  const next = await enqueue(queue, Array(5).fill(1));
  const racer = await db.pool.connect();
  try {
    await racer.query('BEGIN');
    await racer.query(`SELECT 1 FROM jobs WHERE job_id = ANY($1::bigint[]) FOR UPDATE`, [first.slice(0, 35)]);
    const got = await ops.jobClaimNext(db.pool, { ...claim, queue, limit: 10 });
    assert.deepEqual(got.map((j) => j.id), [...first.slice(35), ...next]);
  } finally {
    await racer.query('ROLLBACK');
    racer.release();
  }
});

test('a claim of handled types, and one under a queue limit, follow the same order', async () => {
  const typed = uniquePrefix('prio-types');
  const [a9, a1, a0] = await enqueue(typed, [9, 1, 0]);
  await ops.jobEnqueue(db.pool, [{ type: 'demo.sleep', queue: typed, priority: 0, payload: { ms: 1 } }]); // not handled here
  const got = await ops.jobClaimNext(db.pool, { ...claim, queue: typed, limit: 10, types: ['demo.noop'] });
  assert.deepEqual(got.map((j) => j.id), [a0, a1, a9].sort((x, y) => Number(x) - Number(y)), 'the three handled ones');
  // A claim's rows come back by id; the order of taking shows with a limit of one.
  const limited = uniquePrefix('prio-limited');
  const [b4, b2, b8] = await enqueue(limited, [4, 2, 8]);
  await ops.queueSetControls(db.pool, { name: limited, concurrencyLimit: 1 });
  const taken: string[] = [];
  for (let k = 0; k < 3; k++) {
    const [job] = await ops.jobClaimControlled(db.pool, { ...claim, queue: limited, limit: 5 });
    assert.ok(job, 'one claimed under the limit of one');
    taken.push(job.id);
    await ops.jobComplete(db.pool, { workerId: claim.workerId, items: [{ jobId: job.id, attempt: job.attemptCount }] });
  }
  assert.deepEqual(taken, [b2, b4, b8]);
});

test("a worker's claim from PostgreSQL over its queues: by priority across them, then the queues in the order given, then the oldest; a controlled queue left out", async () => {
  const [a, b, paused] = [uniquePrefix('prio-a'), uniquePrefix('prio-b'), uniquePrefix('prio-paused')];
  const [a9] = await enqueue(a, [9]); // the oldest, but of the lowest priority
  const [a0] = await enqueue(a, [0]);
  const [b0, b1] = await enqueue(b, [0, 1]);
  const [p0] = await enqueue(paused, [0]);
  await ops.queueSetControls(db.pool, { name: paused, paused: true });
  const across = (queues: string[], limit: number) =>
    ops.jobClaimNextAcross(db.pool, { ...claim, queues, limit, types: ['demo.noop'] }).then((jobs) => jobs.map((j) => j.id));
  // Level 0 first, b's before a's (b comes first in this call's order), then b's level 1.
  assert.deepEqual(await across([b, a, paused], 1), [b0]);
  assert.deepEqual(await across([a, b, paused], 1), [a0]);
  assert.deepEqual(await across([paused, a, b], 1), [b1], "a paused queue's job is not taken; a level 1 before a level 9");
  assert.deepEqual(await across([a, b, paused], 5), [a9], 'the rest');
  assert.equal(await jobRowStatus(p0!), 'queued');
});

test("the signal: each level has its own list, workers pop the levels in order, and a backlog, a peek and a discard cover them all", async (t) => {
  const prefix = uniquePrefix('prio-signal');
  const queue = 'q:p1'; // a queue name that looks like a level's suffix does not meet one
  const redis = redisFor(t, prefix);
  const bell = new RedisDoorbell(REDIS_URL, prefix, db.pool, log);
  const receiver = new RedisReceiver(REDIS_URL, prefix, log);
  t.after(async () => {
    receiver.close();
    await bell.close();
  });
  assert.ok(await receiver.ready(5_000));
  await bell.ring([
    { jobId: '10', queue, priority: 9 },
    { jobId: '11', queue, priority: 1 },
    { jobId: '12', queue },
    { jobId: '13', queue, priority: 1 },
    { jobId: '14', queue: 'q', priority: 1 },
  ]);
  assert.deepEqual(await redis.lrange(queueKey(prefix, queue), 0, -1), ['12']);
  assert.deepEqual(await redis.lrange(`${prefix}:queue-p1:${queue}`, 0, -1), ['11', '13']);
  assert.deepEqual(await redis.lrange(`${prefix}:queue-p1:q`, 0, -1), ['14']);
  assert.equal(await bell.backlog(queue), 4);
  assert.deepEqual(await bell.peek(queue, 3), ['12', '11', '13'], 'in the order workers pop them');
  // Released and recovered jobs go to the front of their own level's list.
  await bell.ring([{ jobId: '15', queue, priority: 9 }], { front: true });
  const popped = [];
  for (let k = 0; k < 4; k++) popped.push((await receiver.take([queue], 10, 0)).map((r) => [r.jobId, r.priority]));
  assert.deepEqual(popped, [[['12', 0]], [['11', 1], ['13', 1]], [['15', 9], ['10', 9]], []]);
  // The same with Redis before 7 (no LMPOP): LPOP from the lists that hold ids, in level order.
  (receiver as unknown as { multiPop: boolean }).multiPop = false;
  await bell.ring([{ jobId: '20', queue, priority: 3 }, { jobId: '21', queue, priority: 2 }, { jobId: '22', queue, priority: 3 }]);
  assert.deepEqual((await receiver.take([queue], 2, 0)).map((r) => [r.jobId, r.priority]), [['21', 2], ['20', 3]]);
  assert.deepEqual((await receiver.take([queue], 5, 1_000)).map((r) => [r.jobId, r.priority]), [['22', 3]]);
  await bell.ring([{ jobId: '16', queue, priority: 4 }, { jobId: '17', queue }]);
  await bell.discard([queue]);
  assert.equal(await bell.backlog(queue), 0, 'every level emptied');
  assert.equal(await bell.backlog('q'), 1, 'another queue left alone');
});

test("the recover sweep rings a job whose ring was lost in its own level's list", async (t) => {
  const prefix = uniquePrefix('prio-sweep');
  const queue = prefix;
  const redis = redisFor(t, prefix);
  const bell = new RedisDoorbell(REDIS_URL, prefix, db.pool, log);
  t.after(() => bell.close());
  const [urgent, later] = await enqueue(queue, [0, 6]); // enqueued without a ring: as if it was lost
  await db.pool.query(`UPDATE jobs SET run_at = now() - interval '1 minute' WHERE job_id = ANY($1::bigint[])`, [[urgent, later]]);
  const report = await ops.jobRecover(db.pool, { doorbell: bell, signalGraceMs: 1_000 });
  assert.deepEqual(report.resignalled.map((r) => r.id).sort(), [urgent, later].sort());
  assert.deepEqual(await redis.lrange(queueKey(prefix, queue), 0, -1), [urgent]);
  assert.deepEqual(await redis.lrange(queueKey(prefix, queue, 6), 0, -1), [later]);
  // Rung once: the next sweep finds both rings waiting and pushes nothing.
  const again = await ops.jobRecover(db.pool, { doorbell: bell, signalGraceMs: 1_000 });
  assert.deepEqual(again.resignalled.filter((r) => r.queue === queue), []);
});

test("a schedule's ticks and run-nows are enqueued at its priority, and rung in that level's list", async (t) => {
  const prefix = uniquePrefix('prio-sched');
  const queue = prefix;
  const redis = redisFor(t, prefix);
  const bell = new RedisDoorbell(REDIS_URL, prefix, db.pool, log);
  t.after(() => bell.close());
  const name = `${prefix}-nightly`;
  t.after(() => ops.scheduleDelete(db.pool, name));
  await assert.rejects(ops.scheduleUpsert(db.pool, { name, cron: '0 3 * * *', type: 'demo.noop', queue, priority: 10 }), /priority must be a whole number from 0 to 9/);
  const s = await ops.scheduleUpsert(db.pool, { name, cron: '0 3 * * *', type: 'demo.noop', queue, priority: 7 });
  assert.equal(s.priority, 7);
  await db.pool.query(`UPDATE schedules SET next_run_at = now() - interval '1 second' WHERE name = $1`, [name]);
  const [ticked] = (await ops.scheduleTick(db.pool, { doorbell: bell })).filter((r) => r.queue === queue);
  const ran = await ops.scheduleRunNow(db.pool, { name, doorbell: bell });
  assert.deepEqual(await priorityOf([ticked!.id, ran.id]), [7, 7]);
  assert.deepEqual(await redis.lrange(queueKey(prefix, queue, 7), 0, -1), [ticked!.id, ran.id]);
  assert.equal(await redis.llen(queueKey(prefix, queue)), 0);
  assert.equal((await ops.scheduleUpsert(db.pool, { name, cron: '0 3 * * *', type: 'demo.noop', queue })).priority, 0, 'a redefinition without one: the default');
});

/**
 * A worker with one slot on a queue of its own, `viaRedis` or claiming from PostgreSQL alone,
 * started after ten jobs were enqueued lowest priority first (so the order of enqueue and the
 * order of priority disagree everywhere); returns the priorities in the order it ran them.
 */
async function runInOrder(
  t: TestContext,
  o: { viaRedis: boolean; prefetch: number; enqueue?: (queue: string, doorbell: Doorbell) => Promise<string[]> },
): Promise<{ priorities: (number | undefined)[]; ran: string[]; ids: string[] }> {
  const prefix = uniquePrefix('prio-worker');
  const queue = prefix;
  redisFor(t, prefix);
  const pool = createPool(db.url, { name: 'prio-runner', max: 4 });
  const heartbeatPool = createPool(db.url, { name: 'prio-hb', max: 2 });
  const bell = o.viaRedis ? new RedisDoorbell(REDIS_URL, prefix, pool, log) : new PgDoorbell(pool, log);
  const receiver = o.viaRedis ? new RedisReceiver(REDIS_URL, prefix, log) : null;
  if (receiver) assert.ok(await receiver.ready(5_000));
  const priorities = [9, 7, 5, 3, 1, 0, 2, 4, 6, 8];
  const ids = o.enqueue
    ? await o.enqueue(queue, bell)
    : (await ops.jobEnqueue(db.pool, priorities.map((priority) => ({ type: 'test.record', queue, priority })), { doorbell: bell })).map((r) => r.id);
  const ran: string[] = [];
  const runner = new Runner({
    pool,
    heartbeatPool,
    databaseUrl: db.url,
    receiver,
    doorbell: bell,
    handlers: { 'test.record': (_p, ctx) => void ran.push(ctx.job.id) },
    queues: [queue],
    concurrency: 1,
    prefetch: o.prefetch,
    leaseMs: 30_000,
    heartbeatMs: 1_000,
    pollMs: o.viaRedis ? 60_000 : 200,
    recoverMs: 60_000,
    signalGraceMs: 60_000,
    log,
  });
  await runner.start();
  t.after(async () => {
    await runner.stop(0);
    receiver?.close();
    if (bell instanceof RedisDoorbell) await bell.close();
    await pool.end();
    await heartbeatPool.end();
  });
  await waitFor('the jobs to complete', async () =>
    (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = $1 AND status = 'completed'`, [queue])).rows[0].n === ids.length,
  { timeoutMs: 60_000 });
  return { priorities: await priorityOf(ran), ran, ids };
}

test('a worker with one slot runs a backlog in priority order, through the Redis lists', async (t) => {
  assert.deepEqual((await runInOrder(t, { viaRedis: true, prefetch: 1 })).priorities, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

test('a worker claiming ahead from PostgreSQL runs what one claim took in priority order, not by id', async (t) => {
  assert.deepEqual((await runInOrder(t, { viaRedis: false, prefetch: 9 })).priorities, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

test('within a level, what one claim took starts by due time, not by id', async (t) => {
  const { ran, ids } = await runInOrder(t, {
    viaRedis: false,
    prefetch: 4,
    enqueue: async (queue) => {
      // Lower ids due later: each job is due 300 ms after the next one enqueued.
      const made: string[] = [];
      for (let k = 0; k < 5; k++) made.push((await ops.jobEnqueue(db.pool, [{ type: 'test.record', queue, runAt: new Date(Date.now() + 300 * (5 - k)) }]))[0]!.id);
      await waitFor('all five to be due', async () =>
        (await db.pool.query(`SELECT bool_and(run_at <= now()) AS due FROM jobs WHERE job_id = ANY($1::bigint[])`, [made])).rows[0].due === true);
      return made;
    },
  });
  assert.deepEqual(ran, [...ids].reverse());
});
