/**
 * Singleton keys: at most one unfinished job (queued, retrying or running) holds a key. An
 * enqueue with a held key returns the holder; a finished job lets its key go; a requeue never
 * brings back a second holder, whether the key was taken before its statement or during it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { testDatabase } from '../../test/db';
import { waitFor } from '../../test/wait';
import { applyAction, OP_BATCH, previewAction, resolveTarget } from './bulk';
import * as ops from './ops';

const db = await testDatabase();
const queue = 'singleton';

const claimAndEnd = async (id: string, end: 'complete' | 'fail' | 'retry') => {
  const [job] = await ops.jobClaim(db.pool, { workerId: 'w1', leaseMs: 60_000, ids: [id] });
  assert.ok(job, `job ${id} claimed`);
  const item = { jobId: job.id, attempt: job.attemptCount };
  if (end === 'complete') await ops.jobComplete(db.pool, { workerId: 'w1', items: [item] });
  else await ops.jobFail(db.pool, { workerId: 'w1', items: [{ ...item, error: 'boom', permanent: end === 'fail', backoffMs: 60_000 }] });
};

const unfinished = async (key: string) =>
  (await db.pool.query(`SELECT job_id::text AS id FROM jobs WHERE singleton_key = $1 AND status IN ('queued', 'retrying', 'running')`, [key])).rows.map((r) => r.id);

test('an enqueue returns the job holding the key while it waits, runs and retries; once it finishes, a new job takes the key', async () => {
  const key = 'digest:user:1';
  const [first] = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', singletonKey: key }]);
  assert.equal(first!.created, true);
  const again = async () => (await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', payload: { n: 2 }, singletonKey: key }]))[0]!;
  assert.deepEqual(await again(), { id: first!.id, queue, created: false, heldBy: 'singletonKey' }, 'queued: the holder comes back');

  const [job] = await ops.jobClaim(db.pool, { workerId: 'w1', leaseMs: 60_000, ids: [first!.id] });
  assert.deepEqual(await again(), { id: first!.id, queue, created: false, heldBy: 'singletonKey' }, 'running: the holder comes back');
  await ops.jobFail(db.pool, { workerId: 'w1', items: [{ jobId: job!.id, attempt: job!.attemptCount, error: 'boom', backoffMs: 60_000 }] });
  assert.deepEqual(await again(), { id: first!.id, queue, created: false, heldBy: 'singletonKey' }, 'retrying: the holder comes back');

  const [retry] = await ops.jobClaim(db.pool, { workerId: 'w1', leaseMs: 60_000, ids: [first!.id] });
  assert.equal(retry, undefined, 'not due yet (backoff)');
  await ops.jobRequeue(db.pool, { ids: [first!.id] });
  await claimAndEnd(first!.id, 'complete');
  const next = await again();
  assert.equal(next.created, true, 'completed: the key is free');
  assert.notEqual(next.id, first!.id);
  assert.deepEqual(await unfinished(key), [next.id]);
});

test('in one batch, and from many producers at once, one job per key is made and every caller gets its id', async () => {
  const results = await ops.jobEnqueue(db.pool, [
    { queue, type: 'demo.noop', singletonKey: 'batch:a' },
    { queue, type: 'demo.noop', singletonKey: 'batch:b' },
    { queue, type: 'demo.noop', singletonKey: 'batch:a' },
    { queue, type: 'demo.noop' },
  ]);
  assert.deepEqual(results.map((r) => r.created), [true, true, false, true]);
  assert.equal(results[2]!.id, results[0]!.id);

  const many = await Promise.all(Array.from({ length: 30 }, (_, n) => ops.jobEnqueue(db.pool, n % 2 ? [{ queue, type: 'demo.noop', singletonKey: 'race' }] : [{ queue, type: 'demo.noop', singletonKey: 'race' }, { queue, type: 'demo.noop' }])));
  const ids = new Set(many.map((r) => r[0]!.id));
  assert.equal(ids.size, 1, 'every producer got the same job');
  assert.equal(many.filter((r) => r[0]!.created).length, 1);
  assert.deepEqual(await unfinished('race'), [...ids]);
});

test('an idempotency key used before wins over a singleton key: the caller gets the job of its own request', async () => {
  const [a] = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', idempotencyKey: 'order-7', singletonKey: 'both' }]);
  await claimAndEnd(a!.id, 'complete');
  const [b] = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', idempotencyKey: 'order-8', singletonKey: 'both' }]);
  assert.equal(b!.created, true);
  assert.deepEqual((await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', idempotencyKey: 'order-7', singletonKey: 'both' }]))[0], { id: a!.id, queue, created: false, heldBy: 'idempotencyKey' });
  assert.deepEqual((await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', idempotencyKey: 'order-9', singletonKey: 'both' }]))[0], { id: b!.id, queue, created: false, heldBy: 'singletonKey' });
});

test('a requeue leaves a finished job whose key another job holds, and of two finished ones requeued together takes the older; the preview says so', async () => {
  const key = 'report:42';
  const [old] = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', singletonKey: key }]);
  await claimAndEnd(old!.id, 'fail');
  const [older] = [old!.id];
  const [newer] = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', singletonKey: key }]);
  await claimAndEnd(newer!.id, 'fail');
  const [holder] = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', singletonKey: key }]);
  assert.equal(holder!.created, true);

  const preview = await previewAction(db.pool, 'requeue', { ids: [newer!.id, older] }, {}, {});
  assert.equal(preview.changed, 0);
  assert.match(preview.items[0]!.reason!, new RegExp(`^job ${holder!.id} holds its singleton key "report:42"`));
  const refused = await ops.jobRequeue(db.pool, { ids: [older] });
  assert.equal(refused.changed, 0);
  assert.match(refused.items[0]!.reason!, new RegExp(`^job ${holder!.id} holds its singleton key "report:42" \\(it is queued, retrying or running\\): requeue this one once that one has finished`));

  await claimAndEnd(holder!.id, 'complete');
  const twins = await previewAction(db.pool, 'requeue', { ids: [newer!.id, older] }, {}, {});
  assert.deepEqual(twins.items.map((i) => [i.id, i.ok]), [[newer!.id, false], [older, true]]);
  assert.match(twins.items[0]!.reason!, new RegExp(`^job ${older} holds its singleton key`), 'the older one of the selection takes it first');
  const report = await ops.jobRequeue(db.pool, { ids: [newer!.id, older] });
  assert.deepEqual(report.items.map((i) => [i.id, i.outcome]), [[newer!.id, 'skipped'], [older, 'requeued']]);
  assert.match(report.items[0]!.reason!, new RegExp(`^job ${older} holds its singleton key`));
  assert.deepEqual(await unfinished(key), [older]);
});

test('a key taken by a producer while a requeue waits for it: the requeue tries again and leaves the job, with why', async () => {
  const key = 'race:requeue';
  const [done] = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', singletonKey: key }]);
  await claimAndEnd(done!.id, 'complete');
  // A producer's transaction has inserted a job with the key, not committed: the requeue's
  // snapshot cannot see it, so its compare passes, and its index insert waits on the producer.
  const producer = new pg.Client({ connectionString: db.url });
  await producer.connect();
  try {
    await producer.query('BEGIN');
    const [taken] = await ops.jobEnqueue(producer, [{ queue, type: 'demo.noop', singletonKey: key }]);
    const requeue = ops.jobRequeue(db.pool, { ids: [done!.id] });
    await waitFor('the requeue to wait on the producer', async () => {
      const { rows } = await db.pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%status = ''queued''%' AND pid <> pg_backend_pid()`,
      );
      return rows.length > 0;
    });
    await producer.query('COMMIT');
    const report = await requeue;
    assert.equal(report.changed, 0);
    assert.match(report.items[0]!.reason!, new RegExp(`^job ${taken!.id} holds its singleton key`));
    assert.deepEqual(await unfinished(key), [taken!.id]);
  } finally {
    await producer.end();
  }
});

test('an older finished job the requeue leaves alone (it changed since it was seen) does not keep the newer one from its key', async () => {
  const key = 'stale-twin';
  const made = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', singletonKey: key }]);
  await claimAndEnd(made[0]!.id, 'fail');
  const [newer] = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', singletonKey: key }]);
  await claimAndEnd(newer!.id, 'fail');
  const older = made[0]!.id;
  // The operator's preview saw the older one at attempt 0: it has changed since, and is left.
  const seen = new Map([
    [older, { status: 'failed' as const, attempt: 0 }],
    [newer!.id, { status: 'failed' as const, attempt: 1 }],
  ]);
  const report = await ops.jobRequeue(db.pool, { ids: [older, newer!.id], seen });
  assert.deepEqual(report.items.map((i) => [i.id, i.outcome]), [[older, 'skipped'], [newer!.id, 'requeued']]);
  assert.match(report.items[0]!.reason!, /changed since it was selected|holds its singleton key/);
  assert.deepEqual(await unfinished(key), [newer!.id]);
});

test('a bulk requeue over more than one batch gives the key to the oldest job, as its preview said', async () => {
  const q = 'singleton-bulk';
  const fail = () => db.pool.query(`UPDATE jobs SET status = 'failed', attempt_count = 1, max_attempts = 1, finished_at = now() WHERE queue = $1 AND status = 'queued'`, [q]);
  const [oldest] = (await ops.jobEnqueue(db.pool, Array.from({ length: OP_BATCH + 1 }, (_, n) => ({ queue: q, type: 'demo.noop', singletonKey: n === 0 ? 'bulk-k' : null })))).map((r) => r.id);
  await fail();
  const [newest] = (await ops.jobEnqueue(db.pool, [{ queue: q, type: 'demo.noop', singletonKey: 'bulk-k' }])).map((r) => r.id);
  await fail();
  // Newest first, as the filter lists them: the newest is in the first batch, the oldest in the second.
  const target = await resolveTarget(db.pool, { filter: { status: 'failed', queue: q } });
  const preview = await previewAction(db.pool, 'requeue', target, {}, {});
  assert.equal(preview.skipped, 1);
  assert.match(preview.reasons![0]!.reason, /^another job holds its singleton key/);
  const applied = await applyAction(db.pool, db.pool, 'requeue', target, {}, {});
  assert.deepEqual([applied.changed, applied.skipped], [OP_BATCH + 1, 1]);
  assert.deepEqual(await unfinished('bulk-k'), [oldest], 'the oldest took it');
  assert.equal(applied.items.find((i) => !i.ok)!.id, newest);
});

/** Waits until a statement of this test's database (other than the asking one) waits for a row lock or key. */
const waitsForALock = (what: string, statement: string) =>
  waitFor(what, async () => {
    const { rows } = await db.pool.query(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1 AND pid <> pg_backend_pid()`,
      [`%${statement}%`],
    );
    return rows.length > 0;
  });

const deadlocks = async () => Number((await db.pool.query(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`)).rows[0].deadlocks);

test('a requeue deadlocked with a producer\'s transaction over two keys is tried again, and leaves the jobs it then finds held', async () => {
  // Planned as with statistics whatever ran before: the plan decides the order the
  // statement writes its keys in (never analyzed, it wrote the producer's first, in both rounds).
  await db.pool.query('ANALYZE jobs');
  const before = await deadlocks();
  // The statement writes its two keys in its plan's order: the producer takes one key first,
  // then the other, in both orders, so one of the rounds crosses the statement's order.
  for (const [first, second] of [
    ['dl-a1', 'dl-a2'],
    ['dl-b2', 'dl-b1'],
  ] as const) {
    const done: string[] = [];
    for (const key of [first, second].sort()) {
      const [j] = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop', singletonKey: key }]);
      await claimAndEnd(j!.id, 'complete');
      done.push(j!.id);
    }
    const producer = new pg.Client({ connectionString: db.url });
    await producer.connect();
    try {
      await producer.query('BEGIN');
      const [heldFirst] = await ops.jobEnqueue(producer, [{ queue, type: 'demo.noop', singletonKey: first }]);
      const requeue = ops.jobRequeue(db.pool, { ids: done });
      await waitsForALock('the requeue to wait on the producer', "status = 'queued'");
      // The producer now wants the other key, which the waiting requeue may have written: then
      // one of them is the deadlock's victim. If it is the producer, its transaction is over.
      let heldSecond: string | null = null;
      try {
        heldSecond = (await ops.jobEnqueue(producer, [{ queue, type: 'demo.noop', singletonKey: second }]))[0]!.id;
        await producer.query('COMMIT');
      } catch (err) {
        assert.equal((err as { code?: string }).code, '40P01');
        await producer.query('ROLLBACK');
      }
      const report = await requeue;
      if (heldSecond) {
        assert.equal(report.changed, 0, 'both keys are held by the producer\'s jobs');
        assert.deepEqual(await unfinished(first), [heldFirst!.id]);
        assert.deepEqual(await unfinished(second), [heldSecond]);
      } else {
        assert.equal(report.changed, 2, 'the producer gave way: both are requeued');
      }
    } finally {
      await producer.end();
    }
  }
  await waitFor('a deadlock in one of the rounds, as PostgreSQL counts them', async () => (await deadlocks()) > before, { timeoutMs: 15_000 });
});

test('a batch enqueue deadlocked with a producer\'s transaction is tried again, and returns the jobs the producer made', async () => {
  const before = await deadlocks();
  // PostgreSQL looks for a deadlock once per wait, deadlock_timeout after it began, and aborts
  // the process that finds one. The batch waits first and looks after 5 s (time for the
  // producer's second insert to close the cycle, however slow the machine); the producer after
  // a minute: the batch is the victim.
  const batchPool = new pg.Pool({ connectionString: db.url, options: '-c deadlock_timeout=5s' });
  const producer = new pg.Client({ connectionString: db.url, options: '-c deadlock_timeout=60s' });
  const caller = new pg.Client({ connectionString: db.url, options: '-c deadlock_timeout=5s' });
  await producer.connect();
  await caller.connect();
  try {
    await producer.query('BEGIN');
    const [second] = await ops.jobEnqueue(producer, [{ queue, type: 'demo.noop', singletonKey: 'dl-enq-2' }]);
    // The batch writes dl-enq-1, then waits for the producer's dl-enq-2...
    const batch = ops.jobEnqueue(batchPool, [
      { queue, type: 'demo.noop', singletonKey: 'dl-enq-1' },
      { queue, type: 'demo.noop', singletonKey: 'dl-enq-2' },
    ]);
    await waitsForALock('the batch to wait on the producer', 'INSERT INTO jobs');
    // ...and the producer now wants dl-enq-1: a cycle, which the batch breaks by giving way.
    const [first] = await ops.jobEnqueue(producer, [{ queue, type: 'demo.noop', singletonKey: 'dl-enq-1' }]);
    assert.ok(first!.created && second!.created, 'the producer made both');
    await producer.query('COMMIT');
    const results = await batch;
    assert.deepEqual(
      results,
      [
        { id: first!.id, queue, created: false, heldBy: 'singletonKey' },
        { id: second!.id, queue, created: false, heldBy: 'singletonKey' },
      ],
      'tried again, the batch finds both keys held and returns their jobs',
    );
    assert.ok((await deadlocks()) > before, 'there was a deadlock (PostgreSQL counted it)');

    // Inside its caller's transaction the batch is not tried again: the transaction is over,
    // and the caller gets the deadlock's own error (40P01) to retry the whole of it.
    await producer.query('BEGIN');
    await ops.jobEnqueue(producer, [{ queue, type: 'demo.noop', singletonKey: 'dl-tx-2' }]);
    await caller.query('BEGIN');
    const inTx = ops.jobEnqueue(caller, [
      { queue, type: 'demo.noop', singletonKey: 'dl-tx-1' },
      { queue, type: 'demo.noop', singletonKey: 'dl-tx-2' },
    ]);
    const settled = inTx.then(() => null, (err: { code?: string }) => err.code);
    await waitsForALock("the caller's batch to wait on the producer", 'INSERT INTO jobs');
    await ops.jobEnqueue(producer, [{ queue, type: 'demo.noop', singletonKey: 'dl-tx-1' }]);
    await producer.query('COMMIT');
    assert.equal(await settled, '40P01');
    await caller.query('ROLLBACK');
  } finally {
    await Promise.all([producer.end(), caller.end(), batchPool.end()]);
  }
});

test('an enqueue that meets a job id already taken (a sequence set back) says so, rather than naming a key it does not have', async () => {
  const [j] = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop' }]);
  try {
    for (const batch of [[{ queue, type: 'demo.noop' }], [{ queue, type: 'demo.noop' }, { queue, type: 'demo.noop' }]]) {
      await db.pool.query(`SELECT setval('jobs_job_id_seq', $1::bigint - 1)`, [j!.id]);
      await assert.rejects(ops.jobEnqueue(db.pool, batch), /an enqueue conflicted on the job id drawn from jobs_job_id_seq \(the sequence is behind the ids in jobs/);
    }
  } finally {
    await db.pool.query(`SELECT setval('jobs_job_id_seq', (SELECT max(job_id) FROM jobs))`);
  }
});
