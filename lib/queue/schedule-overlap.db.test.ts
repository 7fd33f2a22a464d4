/**
 * A schedule that runs one at a time (overlap 'skip'): its jobs hold the singleton key
 * `schedule:<name>`, so a tick while a run is unfinished makes no job and moves on (recorded as
 * skipped), a Run now returns the unfinished run, and once it has finished the next tick runs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../../test/db';
import * as ops from './ops';

const db = await testDatabase();

// A tick of its own each time, a second after the last and due: a tick's job is made once, by
// the idempotency key naming the tick, so the same tick twice would make no second job anyway.
let ticks = 0;
const due = (name: string) =>
  db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '100 seconds' + make_interval(secs => $2) WHERE name = $1`, [
    name,
    ++ticks,
  ]);
const schedule = async (name: string) => (await ops.scheduleList(db.pool)).find((s) => s.name === name)!;
const jobsOf = async (queue: string) =>
  (await db.pool.query(`SELECT job_id::text AS id, singleton_key FROM jobs WHERE queue = $1 ORDER BY job_id`, [queue])).rows as { id: string; singleton_key: string | null }[];

test('skip: a tick while the last run is unfinished is skipped, Run now returns that run, and after it finishes the next tick runs', async () => {
  const s = await ops.scheduleUpsert(db.pool, { name: 'digest', cron: '* * * * *', type: 'demo.noop', queue: 'overlap-skip', overlap: 'skip' });
  assert.equal(s.overlap, 'skip');
  await due('digest');
  const [first] = await ops.scheduleTick(db.pool);
  assert.equal(first!.created, true);
  assert.deepEqual(await jobsOf('overlap-skip'), [{ id: first!.id, singleton_key: 'schedule:digest' }]);

  await due('digest');
  assert.deepEqual(await ops.scheduleTick(db.pool), [], 'no job while the first is queued');
  const skipped = await schedule('digest');
  assert.ok(skipped.lastSkippedAt, 'the skipped tick is recorded');
  assert.equal(skipped.lastSkippedJobId, first!.id, 'with the run it met');
  assert.equal(skipped.lastJobId, first!.id, 'the last run stays the one that ran');
  assert.ok(skipped.nextRunAt.getTime() > Date.now() - 1_000, 'and the schedule moved on: the tick is not owed');
  assert.ok(skipped.lastRunAt!.getTime() < skipped.lastSkippedAt!.getTime());

  const run = await ops.scheduleRunNow(db.pool, { name: 'digest' });
  assert.deepEqual(run, { schedule: 'digest', id: first!.id, queue: 'overlap-skip', created: false, overlapping: true });

  // Running still holds it; finished, it lets it go.
  const [claimed] = await ops.jobClaim(db.pool, { workerId: 'w', leaseMs: 60_000, ids: [first!.id] });
  await due('digest');
  assert.deepEqual(await ops.scheduleTick(db.pool), [], 'no job while the first runs');
  await ops.jobComplete(db.pool, { workerId: 'w', items: [{ jobId: claimed!.id, attempt: claimed!.attemptCount }] });
  await due('digest');
  const [second] = await ops.scheduleTick(db.pool);
  assert.equal(second!.created, true);
  assert.notEqual(second!.id, first!.id);
  assert.equal((await schedule('digest')).lastJobId, second!.id);
  assert.equal((await jobsOf('overlap-skip')).length, 2);
});

test('allow (the default): every tick enqueues, with no singleton key; a redefinition that leaves overlap out keeps it', async () => {
  assert.equal((await ops.scheduleUpsert(db.pool, { name: 'pings', cron: '* * * * *', type: 'demo.noop', queue: 'overlap-allow' })).overlap, 'allow');
  await ops.scheduleUpsert(db.pool, { name: 'pings', cron: '* * * * *', type: 'demo.noop', queue: 'overlap-allow', overlap: 'skip' });
  assert.equal((await ops.scheduleUpsert(db.pool, { name: 'pings', cron: '* * * * *', type: 'demo.noop', queue: 'overlap-allow' })).overlap, 'skip');
  const s = await ops.scheduleUpsert(db.pool, { name: 'pings', cron: '* * * * *', type: 'demo.noop', queue: 'overlap-allow', overlap: 'allow' });
  assert.equal(s.overlap, 'allow');
  for (let k = 0; k < 2; k++) {
    await due('pings');
    assert.equal((await ops.scheduleTick(db.pool)).length, 1);
  }
  const run = await ops.scheduleRunNow(db.pool, { name: 'pings' });
  assert.equal(run.created, true);
  assert.equal(run.overlapping, undefined);
  const jobs = await jobsOf('overlap-allow');
  assert.equal(jobs.length, 3, 'two ticks and a run-now, all unfinished at once');
  assert.ok(jobs.every((j) => j.singleton_key === null));
  assert.equal((await schedule('pings')).lastSkippedAt, null);
});

test('a Run now of a schedule that skips overlaps makes the run when none is unfinished, and a tick then skips', async () => {
  await ops.scheduleUpsert(db.pool, { name: 'report', cron: '0 3 * * *', type: 'demo.noop', queue: 'overlap-run', overlap: 'skip' });
  const run = await ops.scheduleRunNow(db.pool, { name: 'report' });
  assert.equal(run.created, true);
  await due('report');
  assert.deepEqual(await ops.scheduleTick(db.pool), []);
  assert.deepEqual((await jobsOf('overlap-run')).map((j) => j.id), [run.id]);
});

test('an overlap policy a handlers module misspells is refused where it is defined', async () => {
  await assert.rejects(
    ops.scheduleUpsert(db.pool, { name: 'typo', cron: '* * * * *', type: 'demo.noop', overlap: 'never' as 'skip' }),
    (e: Error & { code?: string }) => e.code === 'invalid_request' && /overlap must be one of allow, skip/.test(e.message),
  );
});

test("a tick whose own job exists already (its tick set back by hand) is that tick's job, not a skip", async () => {
  await ops.scheduleUpsert(db.pool, { name: 'again', cron: '* * * * *', type: 'demo.noop', queue: 'overlap-again', overlap: 'skip' });
  await due('again');
  const { rows } = await db.pool.query(`SELECT next_run_at FROM schedules WHERE name = 'again'`);
  const [made] = await ops.scheduleTick(db.pool);
  await db.pool.query(`UPDATE jobs SET status = 'cancelled', finished_at = now() WHERE job_id = $1`, [made!.id]);
  await db.pool.query(`UPDATE schedules SET next_run_at = $1 WHERE name = 'again'`, [rows[0].next_run_at]);
  const [same] = await ops.scheduleTick(db.pool);
  assert.deepEqual(same, { id: made!.id, queue: 'overlap-again', created: false, heldBy: 'idempotencyKey' });
  assert.equal((await schedule('again')).lastSkippedAt, null);
});

test('a schedule whose hand-made name is too long for a key ticks all the same: its keys carry the name\'s hash', async () => {
  const long = 'l'.repeat(240);
  await db.pool.query(
    `INSERT INTO schedules (name, cron, timezone, queue, type, payload, max_attempts, next_run_at, enabled, overlap)
     VALUES ($1, '* * * * *', 'UTC', 'overlap-long', 'demo.noop', '{}', 3, now() - interval '1 second', true, 'skip')`,
    [long],
  );
  const [made] = await ops.scheduleTick(db.pool);
  assert.equal(made!.created, true);
  const [job] = (await db.pool.query(`SELECT idempotency_key, singleton_key FROM jobs WHERE job_id = $1`, [made!.id])).rows;
  assert.equal(job.singleton_key, ops.scheduleSingletonKey(long));
  assert.match(job.singleton_key, /^schedule:#[0-9a-f]{64}$/);
  assert.match(job.idempotency_key, /^schedule:#[0-9a-f]{64}:\d{4}-/);
});
