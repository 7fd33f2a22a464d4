/**
 * The stats record: the recover sweep writes a sample a minute (one writer, however many
 * sweep), a week is kept, and a range reads back as rates per bucket and per-type totals.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../../test/db';
import { readHistory, recordStatsSample } from './history';
import * as ops from './ops';
import { TypeTally } from './type-metrics';

const db = await testDatabase();
const samples = async () => (await db.pool.query(`SELECT at, counters, by_type FROM stats_samples ORDER BY at`)).rows;

test('a sweep records a sample of the summed counters, at most one a minute; a week is kept', async () => {
  await db.pool.query('DELETE FROM stats_samples');
  const tally = new TypeTally();
  tally.count({ queue: 'h', type: 'mail' }, 'completed', 7);
  await ops.workerRegister(db.pool, { workerId: 'hist:1:a', host: 'hist', pid: 1, queues: ['h'], concurrency: 1 });
  await ops.workerHeartbeat(db.pool, 'hist:1:a', { claimed: 9, completed: 7, failed: 1, byType: tally.snapshot() });
  // A sample from eight days ago goes when the next is written.
  await db.pool.query(`INSERT INTO stats_samples (at, counters, by_type) VALUES (now() - interval '8 days', '{}', '[]')`);

  assert.notEqual(await ops.recoverSweep(db.pool, {}), null, 'this process swept');
  const after = await samples();
  assert.equal(after.length, 1, 'the week-old sample deleted, one written');
  assert.equal(after[0].counters.claimed, 9);
  assert.equal(after[0].counters.completed, 7);
  assert.deepEqual(
    after[0].by_type.map((t: { queue: string; type: string; completed: number }) => [t.queue, t.type, t.completed]),
    [['h', 'mail', 7]],
  );
  // Sweeps every few seconds: no second sample within the minute.
  assert.notEqual(await ops.recoverSweep(db.pool, {}), null);
  assert.equal(await recordStatsSample(db.pool), false);
  assert.equal((await samples()).length, 1);
  // A minute on (the last sample moved back by hand): the next sweep writes again.
  await db.pool.query(`UPDATE stats_samples SET at = at - interval '1 minute'`);
  assert.equal(await recordStatsSample(db.pool), true);
  assert.equal((await samples()).length, 2);
});

test('a range reads back as rates per bucket, and per queue and type between its first sample and its last', async () => {
  await db.pool.query('DELETE FROM stats_samples');
  const kind = (completed: number, failed: number) => [{ queue: 'h', type: 'mail', completed, retried: 0, failed, cancelled: 0, runTimeMs: { counts: [completed + failed], sum: 0, count: completed + failed } }];
  // Three samples ten minutes apart (each in a bucket of five minutes of its own), and one from two days ago.
  const put = (ago: string, completed: number, failed: number) =>
    db.pool.query(`INSERT INTO stats_samples (at, counters, by_type) VALUES (now() - $1::interval, $2::jsonb, $3::jsonb)`, [
      ago,
      JSON.stringify({ claimed: completed + failed, completed, failed, retried: 0, cancelled: 0, leaseLost: 0, recovered: 0 }),
      JSON.stringify(kind(completed, failed)),
    ]);
  await put('2 days', 1, 0);
  await put('30 minutes', 100, 0);
  await put('20 minutes', 700, 6);
  await put('10 minutes', 1300, 6);
  // Leases lost, read from the attempts (no sample counts them): 15 minutes ago, and a day ago.
  const { rows: job } = await db.pool.query(`INSERT INTO jobs (queue, type, status, payload, attempt_count) VALUES ('h', 'mail', 'retrying', '{}', 2) RETURNING job_id`);
  await db.pool.query(
    `INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome)
     VALUES ($1, 1, 'gone:1:aaaaaa', now() - interval '25 hours', now() - interval '25 hours', 'lease_lost'),
            ($1, 2, 'gone:2:bbbbbb', now() - interval '15 minutes', now() - interval '15 minutes', 'lease_lost')`,
    [job[0].job_id],
  );

  const day = await readHistory(db.pool, '24h');
  assert.equal(day.bucketMs, 300_000);
  assert.equal(day.points.length, 2, 'a rate between each pair of consecutive samples');
  // 600 completed in the 600 s between the first two samples: 1 a second.
  assert.deepEqual(
    day.points.map((p) => [p.completed, p.failed]),
    [
      [1, 0.01],
      [1, 0],
    ],
  );
  assert.ok(day.points[0]!.t < day.points[1]!.t && day.points[0]!.t % 300_000 === 0, 'points at bucket starts, in order');
  assert.deepEqual(
    day.types.map((t) => [t.queue, t.type, t.completed, t.failed, t.runs, t.leaseLost]),
    [['h', 'mail', 1200, 6, 1206, 1]],
    'the sample from two days ago is outside the range',
  );
  const span = day.until!.getTime() - day.since!.getTime();
  assert.ok(Math.abs(span - 20 * 60_000) < 5_000, `from the first sample in the range to the last: ${span} ms`);

  const week = await readHistory(db.pool, '7d');
  assert.deepEqual(week.types.map((t) => [t.completed, t.leaseLost]), [[1299, 2]], 'over the week, from the two-day-old sample');
  assert.equal(week.bucketMs, 3_600_000);
});

test('an empty record reads as nothing yet', async () => {
  await db.pool.query('DELETE FROM stats_samples');
  const h = await readHistory(db.pool, '7d');
  assert.deepEqual([h.since, h.until, h.points, h.types], [null, null, [], []]);
});

/**
 * A sample at a bucket-aligned time: `backS` seconds before the start of the current bucket
 * of `bucketS` seconds, plus `offsetS`, with these counters (the rest 0).
 */
const putAligned = (bucketS: number, backS: number, offsetS: number, counters: { completed?: number; failed?: number }) => {
  const { completed = 0, failed = 0 } = counters;
  return db.pool.query(
    `INSERT INTO stats_samples (at, counters, by_type)
     VALUES (to_timestamp(floor(extract(epoch FROM now()) / $1::float8) * $1::float8 - $2::float8 + $3::float8), $4::jsonb, '[]')`,
    [bucketS, backS, offsetS, JSON.stringify({ claimed: completed + failed, completed, failed, retried: 0, cancelled: 0, leaseLost: 0, recovered: 0 })],
  );
};

test('a hole in the record (no sweep for hours) is not averaged into the bucket before it, and the latest bucket has its point', async () => {
  await db.pool.query('DELETE FROM stats_samples');
  // Bucket-aligned times (five-minute buckets), the base four hours back: two samples a minute
  // apart in one bucket, nothing for three hours (every worker down), then two more in one.
  const put = (offsetS: number, completed: number) => putAligned(300, 4 * 3600, offsetS, { completed });
  await put(10, 0);
  await put(70, 60); // 1 a second within the first bucket
  await put(3 * 3600 + 10, 60);
  await put(3 * 3600 + 70, 180); // 2 a second within the last one
  const day = await readHistory(db.pool, '24h');
  assert.deepEqual(
    day.points.map((p) => p.completed),
    [1, 2],
    'each bucket its own rate: not 60 jobs spread over three hours, and the last bucket not left out',
  );
  assert.equal(day.points[1]!.t - day.points[0]!.t, 3 * 3600_000);
});

test("the lease-lost line counts the lost attempts themselves, not the workers' recovered counters", async () => {
  await db.pool.query('DELETE FROM stats_samples');
  // The current five-minute bucket's start, read once (a test crossing into the next bucket
  // must not put its rows in two).
  const base = Number((await db.pool.query(`SELECT floor(extract(epoch FROM now()) / 300) * 300 AS b`)).rows[0].b);
  const at = (offsetS: number) => `to_timestamp(${base} + ${offsetS})`;
  const counters = (recovered: number) => JSON.stringify({ claimed: 0, completed: 0, failed: 0, retried: 0, cancelled: 0, leaseLost: 0, recovered });
  // Two buckets an hour back, two samples in each, whose counters saw one recovery in all
  // (the worker that took the rest over was killed before reporting them); and the current
  // bucket, from its start to now.
  for (const [when, recovered] of [[at(-3600 + 10), 0], [at(-3600 + 70), 1], [at(-3600 + 310), 1], [at(-3600 + 370), 1], [at(0), 1], ['now()', 1]] as const) {
    await db.pool.query(`INSERT INTO stats_samples (at, counters, by_type) VALUES (${when}, $1::jsonb, '[]') ON CONFLICT (at) DO NOTHING`, [counters(recovered)]);
  }
  // Six attempts lost in the first bucket, one in the second, six in the current one.
  const { rows: job } = await db.pool.query(`INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts) VALUES ('h', 'poison', 'retrying', '{}', 13, 25) RETURNING job_id`);
  await db.pool.query(
    `INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome)
     SELECT $1, n, 'gone:' || n || ':cccccc', t.at, t.at, 'lease_lost'
       FROM generate_series(1, 13) n,
            LATERAL (SELECT CASE WHEN n <= 6 THEN ${at(-3600 + 30)} WHEN n = 7 THEN ${at(-3600 + 320)} ELSE least(${at(0)}, now()) END AS at) t`,
    [job[0].job_id],
  );
  const nowS = async () => Number((await db.pool.query(`SELECT extract(epoch FROM now()) AS s`)).rows[0].s);
  const before = await nowS();
  const day = await readHistory(db.pool, '24h');
  const after = await nowS();
  assert.deepEqual(
    day.points.slice(0, 2).map((p) => p.recovered),
    [Number((6 / 300).toPrecision(3)), Number((1 / 300).toPrecision(3))],
    'per bucket, the attempts lost in it over its five minutes',
  );
  // The current bucket: six over the part of it that has passed (at least a second), not
  // over five minutes.
  const current = day.points.find((p) => p.t === base * 1000);
  assert.ok(current, 'a point for the current bucket');
  const [lo, hi] = [6 / Math.max(after - base, 1), 6 / Math.max(before - base, 1)];
  assert.ok(current.recovered >= lo * 0.995 && current.recovered <= hi * 1.005, `current bucket: ${current.recovered} jobs/s, between ${lo} and ${hi}`);
  await db.pool.query(`DELETE FROM ended_attempts WHERE job_id = $1`, [job[0].job_id]);
  await db.pool.query(`DELETE FROM jobs WHERE job_id = $1`, [job[0].job_id]);
});

test('a few failures an hour read as what they are over a week, not rounded to none', async () => {
  await db.pool.query('DELETE FROM stats_samples');
  // Two samples 50 minutes apart in one hour's bucket, a day back: 10 jobs dead-lettered between.
  const put = (offsetS: number, failed: number) => putAligned(3600, 24 * 3600, offsetS, { failed });
  await put(60, 0);
  await put(3060, 10);
  const week = await readHistory(db.pool, '7d');
  assert.deepEqual(week.points.map((p) => p.failed), [0.00333], '10 in 3000 s');
});
