/**
 * The overview's per-queue numbers against the table, where the statuses are too large to
 * count per queue and the statistics are older than the jobs: a queue that filled since the
 * last ANALYZE shows its waiting jobs, not the 0 its (missing) share of the statistics
 * gave, and a count nothing knows is "unknown", not 0. With more queues than are listed,
 * the oldest due job is still read over all of them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../../test/db';
import type { Executor } from '../db/client';
import { computeConsoleStats, GROUP_CAP, QUEUES_MAX } from './console-stats';
import { recoverSweep, workerHeartbeat, workerRegister, workerSetQuiet } from './ops';
import { listWorkers } from './read';

const db = await testDatabase();
const stats = () => computeConsoleStats(db.pool, { leaseMs: 30_000 });
const queue = async (name: string) => (await stats()).queues.find((q) => q.queue === name);

test('a queue filled after the last ANALYZE shows its queued jobs; a count the statistics cannot share is unknown', async () => {
  // Queued and failed are both too large to count per queue (over GROUP_CAP each).
  await db.pool.query(
    `INSERT INTO jobs (queue, type, status, run_at) SELECT 'w', 'demo.noop', 'queued', now() - interval '5 s' FROM generate_series(1, $1::int);
     INSERT INTO jobs (queue, type, status, attempt_count, started_at, finished_at, error)
       SELECT 'w', 'demo.noop', 'failed', 1, now(), now(), 'boom' FROM generate_series(1, $1::int);`.replace(/\$1::int/g, String(GROUP_CAP + 1000)),
  );
  await db.pool.query('ANALYZE jobs');
  await db.pool.query(
    `INSERT INTO jobs (queue, type, status, run_at) SELECT 'burst', 'demo.noop', 'queued', now() - interval '20 s' FROM generate_series(1, 3000);
     INSERT INTO jobs (queue, type, status, run_at) SELECT 'few', 'demo.noop', 'queued', now() - interval '1 s' FROM generate_series(1, 3);
     INSERT INTO jobs (queue, type, status, attempt_count, started_at, finished_at, error)
       SELECT 'burst', 'demo.noop', 'failed', 1, now(), now(), 'boom' FROM generate_series(1, 10);`,
  );
  const burst = (await queue('burst'))!;
  assert.equal(burst.due, 3000);
  assert.deepEqual([burst.counts.queued, burst.kinds.queued], [3000, 'exact'], 'its waiting jobs, counted');
  assert.equal(burst.kinds.failed, 'unknown', 'not in the statistics: unknown, not 0');
  const few = (await queue('few'))!;
  assert.deepEqual([few.counts.queued, few.kinds.queued], [3, 'exact']);
  const w = (await queue('w'))!;
  assert.deepEqual([w.counts.queued, w.kinds.queued], [GROUP_CAP + 1000, 'exact'], 'not a share of a total that grew since');
  assert.equal(w.kinds.failed, 'estimate');
});

test("a queue's estimated share of a status too large to count per queue is its own, not the unlisted queues' too", async () => {
  // Failed is past GROUP_CAP: shared out by the (queue, status) statistics, which list only
  // the commonest pairs. 300 small queues of 10 failed jobs each are not among them.
  await db.pool.query(
    `INSERT INTO jobs (queue, type, status, attempt_count, started_at, finished_at, error)
       SELECT 'est-big', 'demo.noop', 'failed', 1, now(), now(), 'boom' FROM generate_series(1, 4000);
     INSERT INTO jobs (queue, type, status, attempt_count, started_at, finished_at, error)
       SELECT 'est-s' || (i % 300), 'demo.noop', 'failed', 1, now(), now(), 'boom' FROM generate_series(1, 3000) i;`,
  );
  // The joint statistics keep ten pairs here (the table's other statistics, and so the rows
  // ANALYZE reads, as they are): what a busy installation's thousands of queues come to.
  await db.pool.query('ALTER STATISTICS jobs_queue_status_stats SET STATISTICS 10');
  try {
    await db.pool.query('ANALYZE jobs');
    const listed = await db.pool.query(`SELECT array_length(most_common_vals, 1) AS n FROM pg_stats_ext WHERE statistics_name = 'jobs_queue_status_stats'`);
    assert.ok(listed.rows[0].n <= 10, 'the small queues are not all listed');
    const big = (await queue('est-big'))!;
    assert.equal(big.kinds.failed, 'estimate');
    assert.ok(Math.abs(big.counts.failed - 4000) <= 200, `about 4000, not a share of the listed queues alone: ${big.counts.failed}`);
  } finally {
    await db.pool.query('ALTER STATISTICS jobs_queue_status_stats SET STATISTICS -1');
    await db.pool.query('ANALYZE jobs');
  }
});

test('with more queues waiting than are listed, the list says so and the oldest due job is read over all of them', async () => {
  await db.pool.query(
    `INSERT INTO jobs (queue, type, status, run_at)
       SELECT 'q' || lpad(i::text, 4, '0'), 'demo.noop', 'queued', now() - interval '10 s' FROM generate_series(1, ${QUEUES_MAX + 5}) i;
     INSERT INTO jobs (queue, type, status, run_at) VALUES ('zz-last', 'demo.noop', 'queued', now() - interval '3 hours');`,
  );
  const s = await stats();
  assert.equal(s.queuesTruncated, true);
  assert.ok(s.queues.length <= QUEUES_MAX);
  assert.ok(!s.queues.some((q) => q.queue === 'zz-last'), 'past the first by name');
  assert.ok(s.oldestQueuedAgeMs! >= 3 * 3600_000, `the oldest due job is 3 hours old, not ${s.oldestQueuedAgeMs} ms`);
});

test("a queue's queued and retrying counts come from one read, so jobs changing meanwhile never make one negative", async () => {
  // Queued is too large to count per queue (the test above left GROUP_CAP + 1000 in 'w');
  // retrying is small, counted per queue by a later statement.
  await db.pool.query(`INSERT INTO jobs (queue, type, status, run_at) VALUES ('one', 'demo.noop', 'queued', now())`);
  const racing: Executor = {
    query: (async (text: unknown, values?: unknown[]) => {
      // Between the waiting scan and the per-queue count of retrying: three retries appear.
      if (typeof text === 'string' && /GROUP BY queue/.test(text)) {
        await db.pool.query(
          `INSERT INTO jobs (queue, type, status, attempt_count, run_at) SELECT 'one', 'demo.noop', 'retrying', 1, now() + interval '1 minute' FROM generate_series(1, 3)`,
        );
      }
      return db.pool.query(text as string, values);
    }) as Executor['query'],
  };
  const one = (await computeConsoleStats(racing, { leaseMs: 30_000 })).queues.find((q) => q.queue === 'one')!;
  assert.ok(one.counts.queued >= 0 && one.counts.retrying >= 0, JSON.stringify(one.counts));
  assert.deepEqual([one.counts.queued, one.kinds.queued], [1, 'exact']);
});

test('due jobs of a type no live worker on the queue handles are counted apart (they wait for a handler, not a ring)', async () => {
  await db.pool.query(
    `INSERT INTO jobs (queue, type, status, run_at) SELECT 'a-typed', 'mail.send', 'queued', now() - interval '2 s' FROM generate_series(1, 4);
     INSERT INTO jobs (queue, type, status, run_at) SELECT 'a-typed', 'report.build', 'queued', now() - interval '2 s' FROM generate_series(1, 7);
     INSERT INTO jobs (queue, type, status, run_at) VALUES ('a-typed', 'report.build', 'queued', now() + interval '1 hour');`,
  );
  const worker = (id: string, types: string[] | null, heartbeatAgo = '0 s') =>
    db.pool.query(`INSERT INTO workers (worker_id, host, pid, queues, concurrency, types, heartbeat_at) VALUES ($1, 'h', 1, '{a-typed}', 1, $2, now() - $3::interval)`, [
      id,
      types,
      heartbeatAgo,
    ]);
  assert.equal((await queue('a-typed'))!.dueUnhandled, 0, 'no live worker: the queue is unserved, no type is judged');
  await worker('typed-mail', ['mail.send']);
  await worker('typed-dead', ['report.build'], '1 hour');
  const q = (await queue('a-typed'))!;
  assert.deepEqual([q.due, q.dueUnhandled], [11, 7], 'the report jobs due now: only a dead worker had their handler; the one due later is not counted');
  await worker('typed-none', []);
  assert.equal((await queue('a-typed'))!.dueUnhandled, 7, 'a worker with no handlers adds none');
  await worker('typed-old', null);
  assert.equal((await queue('a-typed'))!.dueUnhandled, 0, 'a worker of an earlier version (no types recorded) takes any type');
});

test('a quiet worker is alive but serves no queue: its queue reads unserved, and its handlers are not counted', async () => {
  await db.pool.query(`INSERT INTO jobs (queue, type, status, run_at) SELECT 'a-quiet', 'mail.send', 'queued', now() - interval '2 s' FROM generate_series(1, 3)`);
  await db.pool.query(`INSERT INTO workers (worker_id, host, pid, queues, concurrency, types, metrics) VALUES ('quiet-1', 'h', 1, '{a-quiet}', 1, '{mail.send}', '{"quiet": false}')`);
  const stats = () => computeConsoleStats(db.pool as Executor, { leaseMs: 30_000 });
  const before = await stats();
  const q0 = before.queues.find((q) => q.queue === 'a-quiet')!;
  assert.deepEqual([q0.workersAlive, q0.dueUnhandled], [1, 0]);
  assert.deepEqual(await workerSetQuiet(db.pool, { workerIds: ['quiet-1'], quiet: true, by: 'test' }), ['quiet-1']);
  const after = await stats();
  const q1 = after.queues.find((q) => q.queue === 'a-quiet')!;
  assert.equal(q1.workersAlive, 0, 'nobody claims from it');
  assert.equal(after.workersAlive, before.workersAlive, 'the process is still alive');
});

test('a worker id registered again (a new incarnation) is not left quiet: it claims from its start', async () => {
  const w = { workerId: 'quiet-again:1:a', host: 'h', pid: 1, queues: ['a-quiet-again'], concurrency: 1 };
  await db.pool.query(`INSERT INTO jobs (queue, type, status) VALUES ('a-quiet-again', 'mail.send', 'queued')`);
  await workerRegister(db.pool, w);
  await workerHeartbeat(db.pool, w.workerId, { quiet: false }); // it reads quiet requests
  assert.deepEqual(await workerSetQuiet(db.pool, { workerIds: [w.workerId], quiet: true, by: 'test' }), [w.workerId]);
  await db.pool.query(`UPDATE workers SET stopped_at = now() WHERE worker_id = $1`, [w.workerId]);
  await workerRegister(db.pool, w);
  const { rows } = await db.pool.query(`SELECT quiet_at, quiet_by FROM workers WHERE worker_id = $1`, [w.workerId]);
  assert.deepEqual(rows[0], { quiet_at: null, quiet_by: null }, 'its runner starts claiming: the row must not read quiet');
  const q = (await computeConsoleStats(db.pool as Executor, { leaseMs: 30_000 })).queues.find((x) => x.queue === 'a-quiet-again');
  assert.equal(q?.workersAlive, 1, 'counted as serving its queue');
});

test('the workers page says "quiet" once the process reports this request back, not an earlier one read before a resume', async () => {
  const w = { workerId: 'quiet-seen:1:a', host: 'h', pid: 1, queues: ['a-quiet-seen'], concurrency: 1 };
  await workerRegister(db.pool, w);
  const seen = async () => {
    const row = (await listWorkers(db.pool)).find((x) => x.workerId === w.workerId)!;
    return [row.quietAt !== null, row.quietSeen];
  };
  // Each report is what a runner sends: the request it runs by, read with an earlier heartbeat.
  await workerSetQuiet(db.pool, { workerIds: [w.workerId], quiet: true, by: 'test' });
  assert.deepEqual(await seen(), [true, false], 'quieting: not read yet');
  const first = await workerHeartbeat(db.pool, w.workerId, { quiet: false });
  assert.equal(first.quiet, true);
  assert.match(first.quietToken ?? '', /^\d+(\.\d+)?$/);
  assert.deepEqual(await seen(), [true, false], 'read, but a claim begun before may still be under way');
  await workerHeartbeat(db.pool, w.workerId, { quiet: first.quietToken });
  assert.deepEqual(await seen(), [true, true], 'quiet: reported back');
  // Resumed, read, and quieted again before the next report: the process claims meanwhile.
  await workerSetQuiet(db.pool, { workerIds: [w.workerId], quiet: false, by: 'test' });
  assert.deepEqual(await workerHeartbeat(db.pool, w.workerId, { quiet: first.quietToken }), { quiet: false, quietToken: null });
  await workerSetQuiet(db.pool, { workerIds: [w.workerId], quiet: true, by: 'test' });
  assert.deepEqual(await seen(), [true, false], 'quieting again: the report names the earlier request');
  const second = await workerHeartbeat(db.pool, w.workerId, { quiet: false });
  assert.notEqual(second.quietToken, first.quietToken);
  await workerHeartbeat(db.pool, w.workerId, { quiet: second.quietToken });
  assert.deepEqual(await seen(), [true, true]);
  // A process of the version before tokens reports true.
  await workerHeartbeat(db.pool, w.workerId, { quiet: true });
  assert.deepEqual(await seen(), [true, true]);
});

// The recover sweep is what moves expired leases on; stopped while workers are alive (its
// lock held by a session that does not sweep), nothing else would tell an operator.
test('a sweep records when it ran (database clock) and in which worker; the stats say how long ago, and the bound past which it has stopped', async () => {
  await db.pool.query(`UPDATE recover_sweep SET swept_at = now() - interval '10 minutes', swept_by = 'gone:1:old'`);
  const before = await computeConsoleStats(db.pool, { leaseMs: 30_000, recoverMs: 5_000 });
  assert.ok(before.sweptAgoMs! >= 600_000 && before.sweptAgoMs! < 660_000, `ten minutes ago (${before.sweptAgoMs})`);
  assert.equal(before.sweepStaleAfterMs, 60_000, 'ten intervals, never under a minute');
  assert.equal((await computeConsoleStats(db.pool, { leaseMs: 30_000, recoverMs: 30_000 })).sweepStaleAfterMs, 300_000);

  assert.ok(await recoverSweep(db.pool, { sweeper: 'host:2:now' }), 'the sweep ran');
  const after = await computeConsoleStats(db.pool, { leaseMs: 30_000 });
  assert.ok(after.sweptAgoMs !== null && after.sweptAgoMs < 10_000, `just now (${after.sweptAgoMs})`);
  const { rows } = await db.pool.query(`SELECT swept_by FROM recover_sweep`);
  assert.deepEqual(rows, [{ swept_by: 'host:2:now' }]);

  // A row deleted by hand is made again by the next sweep, not left to read "never".
  await db.pool.query(`DELETE FROM recover_sweep`);
  await recoverSweep(db.pool, { sweeper: 'host:3:again' });
  assert.deepEqual((await db.pool.query(`SELECT swept_by FROM recover_sweep`)).rows, [{ swept_by: 'host:3:again' }]);
});

// A transaction left open (an idle psql session, a backup) keeps vacuum from clearing every
// row finished after it began: dead rows pile up and each claim and count reads past them.
test('the stats name the session whose open transaction holds back vacuum, the dead rows in jobs and the xid age', async () => {
  const quiet = (await stats()).database;
  assert.equal(quiet.oldestTransaction, null, 'no other session holds a transaction');
  assert.ok(quiet.xidAge !== null && quiet.xidAge > 0, `xid age ${quiet.xidAge}`);

  const holder = await db.pool.connect();
  try {
    await holder.query(`SET application_name = 'lh-test-holder'`);
    await holder.query('BEGIN');
    await holder.query('SELECT txid_current()'); // a transaction id: vacuum's horizon stops here
    const pid = (await holder.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    // Rows finished after it began stay, dead: the collector counts them (flushed now, not in a second).
    const { rows: ids } = await db.pool.query(`INSERT INTO jobs (queue, type) SELECT 'dead-rows', 'demo.noop' FROM generate_series(1, 500) RETURNING job_id`);
    const cleaner = await db.pool.connect();
    try {
      await cleaner.query(`DELETE FROM jobs WHERE job_id = ANY($1::bigint[])`, [ids.map((r) => r.job_id)]);
      await cleaner.query('SELECT pg_stat_force_next_flush()');
      await cleaner.query('SELECT 1'); // its stats go out at the end of a transaction
    } finally {
      cleaner.release();
    }
    const held = (await stats()).database;
    assert.equal(held.oldestTransaction?.pid, pid);
    assert.equal(held.oldestTransaction?.state, 'idle in transaction');
    assert.equal(held.oldestTransaction?.application, 'lh-test-holder');
    assert.ok(held.oldestTransaction!.ageMs >= 0);
    assert.ok(held.deadRows! >= 500, `dead rows ${held.deadRows}`);
    await holder.query('ROLLBACK');
    assert.equal((await stats()).database.oldestTransaction, null, 'gone with its end');
  } finally {
    await holder.query('ROLLBACK').catch(() => {});
    holder.release();
  }
});

test("the workers page's order does not move with heartbeats: live by host and start, then silent, then ended (latest first)", async () => {
  const reg = (id: string, host: string) => workerRegister(db.pool, { workerId: id, host, pid: 1, queues: ['order-q'], concurrency: 1 });
  for (const [id, host] of [['order:b1', 'b'], ['order:a1', 'a'], ['order:a2', 'a'], ['order:gone1', 'a'], ['order:gone2', 'b'], ['order:silent', 'a']]) await reg(id!, host!);
  await db.pool.query(`UPDATE workers SET started_at = started_at + interval '1 s' WHERE worker_id = 'order:a2'`);
  await db.pool.query(`UPDATE workers SET stopped_at = now() - interval '1 min' WHERE worker_id = 'order:gone1'`);
  await db.pool.query(`UPDATE workers SET stopped_at = now() WHERE worker_id = 'order:gone2'`);
  await db.pool.query(`UPDATE workers SET heartbeat_at = now() - interval '2 min' WHERE worker_id = 'order:silent'`);
  const order = async () => (await listWorkers(db.pool, { staleAfterMs: 30_000 })).map((w) => w.workerId).filter((id) => id.startsWith('order:'));
  const expected = ['order:a1', 'order:a2', 'order:b1', 'order:silent', 'order:gone2', 'order:gone1'];
  assert.deepEqual(await order(), expected);
  // Heartbeats in another order than the rows': nothing moves.
  for (const id of ['order:b1', 'order:a2', 'order:a1']) await workerHeartbeat(db.pool, id, { quiet: false });
  assert.deepEqual(await order(), expected);
});

test('due suspects (two leases lost in a row) are counted apart, as waiting their turn, not missing a wake-up', async () => {
  await workerRegister(db.pool, { workerId: 'suspect-w:1:a', host: 'h', pid: 1, queues: ['a-suspect-q'], concurrency: 2 });
  await db.pool.query(
    `INSERT INTO jobs (queue, type, status, attempt_count, max_attempts, attempt_budget, run_at, lease_lost_streak)
     SELECT 'a-suspect-q', 'demo.sleep', 'retrying', 2, 5, 5, now() - interval '1 s', s FROM unnest(ARRAY[2, 2, 3, 1, 0]) AS s`,
  );
  const q = await queue('a-suspect-q');
  assert.deepEqual([q?.due, q?.dueSuspect, q?.dueUnhandled], [5, 3, 0]);
});

test("an ended worker's row names the jobs in hand when it ended (its lost leases), the suspects among them first and marked; a live one's names none", async () => {
  await workerRegister(db.pool, { workerId: 'lost-w:1:dead', host: 'h', pid: 1, queues: ['lost-q'], concurrency: 2 });
  await workerRegister(db.pool, { workerId: 'lost-w:2:live', host: 'h', pid: 2, queues: ['lost-q'], concurrency: 2 });
  const { rows } = await db.pool.query(
    `INSERT INTO jobs (queue, type, status, attempt_count, max_attempts, attempt_budget, lease_lost_streak, finished_at)
     SELECT 'lost-q', 'demo.sleep', st::job_status, 1, 5, 5, s, CASE WHEN st = 'cancelled' THEN now() END
       FROM unnest(ARRAY[2, 1, 1, 1, 2, 1, 1, 1, 1, 3], ARRAY['retrying', 'retrying', 'retrying', 'retrying', 'cancelled', 'retrying', 'retrying', 'retrying', 'retrying', 'retrying']) WITH ORDINALITY AS t(s, st, k)
      ORDER BY k
     RETURNING job_id::text AS id`,
  );
  const [poison, victim, elsewhere, earlier, cancelled, ...rest] = rows.map((r) => r.id as string);
  const others = rest.slice(0, 4);
  const poisonLast = rest[4]!; // a suspect with the highest id: shown all the same
  // The dead process's lost leases: eight (a cancelled job's among them) lost after its last
  // heartbeat, one lost minutes before it, while it went on running (a renewal refused).
  const lost = [poison, victim, cancelled, ...others, poisonLast];
  await db.pool.query(
    `INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome)
     SELECT unnest($1::bigint[]), 1, 'lost-w:1:dead', now(), now(), 'lease_lost'::attempt_outcome
     UNION ALL SELECT $2, 1, 'lost-w:2:live', now(), now(), 'lease_lost'
     UNION ALL SELECT $3, 1, 'lost-w:1:dead', now() - interval '6 min', now() - interval '5 min', 'lease_lost'`,
    [lost, elsewhere, earlier],
  );
  await db.pool.query(`UPDATE workers SET stopped_at = now(), exit = 'killed by SIGKILL' WHERE worker_id = 'lost-w:1:dead'`);
  const byId = new Map((await listWorkers(db.pool)).map((w) => [w.workerId, w]));
  const dead = byId.get('lost-w:1:dead')!;
  assert.deepEqual(
    dead.lostJobs,
    [
      { id: poison, suspect: true },
      { id: poisonLast, suspect: true },
      { id: victim, suspect: false },
      { id: cancelled, suspect: false },
      { id: others[0], suspect: false },
    ],
    'the suspects first, then by id; the jobs lost after its last heartbeat, not the one lost while it ran on; a cancelled job is no suspect',
  );
  assert.equal(dead.lostJobsTotal, lost.length, 'how many it had in hand, past the five shown');
  assert.deepEqual([byId.get('lost-w:2:live')!.lostJobs, byId.get('lost-w:2:live')!.lostJobsTotal], [[], 0], 'a running process: its lost leases are no crash report');
});

