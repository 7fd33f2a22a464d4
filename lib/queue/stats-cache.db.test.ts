/**
 * The overview's numbers are computed once for every viewer: twenty concurrent requests
 * (twenty open dashboards polling at once) cost one computation, and the next one is not
 * run before the refresh interval. Past the interval a viewer is answered from the last
 * snapshot at once while one computation runs behind it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type pg from 'pg';
import { testDatabase } from '../../test/db';
import { insertJob } from '../../test/factories';
import { waitFor } from '../../test/wait';
import { statsSnapshotDto } from '../http/dto';
import * as ops from './ops';
import { MIN_REFRESH_MS, StatsCache, TYPES_WINDOW_MS } from './stats-cache';
import { TypeTally } from './type-metrics';

const db = await testDatabase();

/** The pool, counting the stats computations run through it (each takes one connection). */
function countingPool() {
  const counter = { computations: 0 };
  const pool = new Proxy(db.pool, {
    get(t, prop) {
      const v = Reflect.get(t, prop, t);
      if (prop === 'connect') return () => (counter.computations++, t.connect());
      return typeof v === 'function' ? v.bind(t) : v;
    },
  }) as pg.Pool;
  return { pool, counter };
}

/** countingPool, whose connections are refused while `down.now` is set (the database away). */
function flakyPool() {
  const { pool: counting, counter } = countingPool();
  const down = { now: false };
  const pool = new Proxy(counting, {
    get(t, prop) {
      if (prop === 'connect' && down.now) return () => Promise.reject(Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' }));
      return Reflect.get(t, prop, t);
    },
  }) as pg.Pool;
  return { pool, counter, down };
}

test('twenty concurrent viewers share one stats computation', async () => {
  for (let i = 0; i < 5; i++) await insertJob(db.pool, { status: 'completed', queue: 'sc-q' });
  const { pool: counting, counter } = countingPool();
  const cache = new StatsCache(counting, { leaseMs: 30_000 });
  try {
    const results = await Promise.all(Array.from({ length: 20 }, () => cache.get()));
    assert.equal(counter.computations, 1);
    assert.ok(results.every((r) => r.counts.completed === 5 && r.kinds.completed === 'exact'));
    await insertJob(db.pool, { status: 'completed', queue: 'sc-q' });
    const again = await cache.get();
    assert.equal(counter.computations, 1, 'within the refresh interval the snapshot is served as it is');
    assert.equal(again.counts.completed, 5);
    assert.ok(again.refreshMs >= MIN_REFRESH_MS);
    assert.ok(again.dbNow.getTime() >= again.computedAt.getTime(), 'dbNow moves on from the snapshot time');
  } finally {
    cache.stop();
  }
});

test('past the refresh interval a viewer gets the last snapshot at once, and one computation runs behind it', async () => {
  await insertJob(db.pool, { status: 'cancelled', queue: 'sc-swr' });
  const { pool: counting, counter } = countingPool();
  const cache = new StatsCache(counting, { leaseMs: 30_000, minRefreshMs: 50 });
  try {
    const first = await cache.get();
    const servedAt = Date.now();
    const before = first.counts.cancelled;
    await insertJob(db.pool, { status: 'cancelled', queue: 'sc-swr' });
    // Wait out the interval (it grows with the computation's cost, so ask the cache).
    await waitFor('the snapshot to pass its refresh interval', async () => Date.now() - servedAt > first.refreshMs + 20, { intervalMs: 20 });
    const stale = await Promise.all(Array.from({ length: 5 }, () => cache.get()));
    assert.ok(stale.every((s) => s.counts.cancelled === before), 'answered from the last snapshot, not after a new count');
    assert.equal(counter.computations, 2, 'five stale answers started one computation');
    await waitFor('the computation behind it', async () => (await cache.get()).counts.cancelled === before + 1);
  } finally {
    cache.stop();
  }
});

test('the refresh interval grows with the computation, not with the wait for its connection', async () => {
  // A connection that takes 3 s to come (the console's first, opened while it starts up; a
  // busy pool): ten times that would keep the start's snapshot for half a minute or more.
  const slowConnect = new Proxy(db.pool, {
    get(t, prop) {
      if (prop === 'connect') return async () => (await new Promise((r) => setTimeout(r, 3_000)), t.connect());
      const v = Reflect.get(t, prop, t);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  }) as pg.Pool;
  const cache = new StatsCache(slowConnect, { leaseMs: 30_000, minRefreshMs: 50 });
  try {
    const first = await cache.get();
    assert.ok(first.refreshMs < 10 * 3_000, `refreshed every ${first.refreshMs} ms after a computation of ${first.computeMs} ms`);
  } finally {
    cache.stop();
  }
});

test('the wall clock stepped back an hour after a snapshot: the next refresh still comes after the interval, not an hour later', async () => {
  await insertJob(db.pool, { status: 'cancelled', queue: 'sc-step' });
  const cache = new StatsCache(db.pool, { leaseMs: 30_000, minRefreshMs: 50 });
  const wall = Date.now;
  try {
    const first = await cache.get();
    const before = first.counts.cancelled;
    Date.now = () => wall() - 3_600_000; // as NTP or `date -s` would step it
    await insertJob(db.pool, { status: 'cancelled', queue: 'sc-step' });
    await waitFor('the new job in the numbers', async () => (await cache.get()).counts.cancelled === before + 1, { timeoutMs: 15_000, intervalMs: 20 });
    const after = await cache.get();
    assert.ok(after.dbNow.getTime() >= first.dbNow.getTime(), 'dbNow (the database clock) does not step back with ours');
  } finally {
    Date.now = wall;
    cache.stop();
  }
});

test('after a quiet spell the first viewer is answered from the last snapshot at once; after a failed refresh, a viewer past the bound waits and gets the error', async () => {
  await insertJob(db.pool, { status: 'cancelled', queue: 'sc-idle' });
  const { pool: flaky, counter, down } = flakyPool();
  const cache = new StatsCache(flaky, { leaseMs: 30_000, minRefreshMs: 50, maxStaleMs: 100 });
  try {
    const first = await cache.get();
    const servedAt = Date.now();
    // Nobody looks for longer than the failing bound (maxStaleMs) and three intervals.
    await waitFor('a quiet spell', async () => Date.now() - servedAt > Math.max(100, first.refreshMs * 3) + 50, { intervalMs: 20 });
    const after = await cache.get();
    assert.equal(after.computedAt.getTime(), first.computedAt.getTime(), 'the last snapshot, at once: the database never failed');
    assert.equal(counter.computations, 2, 'and one computation behind it');
    await waitFor('the computation behind it', async () => (await cache.get()).computedAt.getTime() > first.computedAt.getTime());
    const fresh = await cache.get();
    const seenAt = Date.now(); // the snapshot is at least this old from here on

    down.now = true;
    await waitFor('the refresh interval', async () => Date.now() - seenAt > fresh.refreshMs + 20, { intervalMs: 20 });
    assert.equal((await cache.get()).computedAt.getTime(), fresh.computedAt.getTime(), 'the first refresh that fails is behind a stale answer');
    await waitFor('past the failing bound', async () => Date.now() - seenAt > Math.max(100, fresh.refreshMs * 3) + 50, { intervalMs: 20 });
    await assert.rejects(cache.get(), /connection refused/, 'then a viewer sees the error, not an ever older snapshot');
    down.now = false;
    await waitFor('the database back', async () => (await cache.get()).computedAt.getTime() > fresh.computedAt.getTime());
  } finally {
    cache.stop();
  }
});

test('a snapshot served on because its refresh failed says so (refreshFailing), and stops saying it once a refresh succeeds', async () => {
  const { pool: flaky, down } = flakyPool();
  // A long failing bound: the stale snapshot is served throughout.
  const cache = new StatsCache(flaky, { leaseMs: 30_000, minRefreshMs: 50, maxStaleMs: 60_000 });
  try {
    const first = await cache.get();
    assert.equal(first.refreshFailing, false);
    down.now = true;
    await waitFor('a stale snapshot served because its refresh failed', async () => {
      const s = await cache.get();
      return s.refreshFailing && s.computedAt.getTime() === first.computedAt.getTime();
    }, { intervalMs: 20 });
    down.now = false;
    await waitFor('a fresh snapshot once the database is back', async () => {
      const s = await cache.get();
      return !s.refreshFailing && s.computedAt.getTime() > first.computedAt.getTime();
    }, { intervalMs: 20 });
  } finally {
    cache.stop();
  }
});

test('after invalidate() the next viewer waits for numbers computed after it, even within the refresh interval', async () => {
  await insertJob(db.pool, { status: 'failed', queue: 'sc-inv' });
  const { pool: counting, counter } = countingPool();
  // A long interval: without invalidate() the snapshot would be served for a minute.
  const cache = new StatsCache(counting, { leaseMs: 30_000, minRefreshMs: 60_000 });
  try {
    const first = await cache.get();
    const before = first.counts.failed;
    await insertJob(db.pool, { status: 'failed', queue: 'sc-inv' });
    assert.equal((await cache.get()).counts.failed, before, 'within the interval: the snapshot');
    cache.invalidate();
    const viewers = await Promise.all(Array.from({ length: 5 }, () => cache.get()));
    assert.ok(
      viewers.every((v) => v.counts.failed === before + 1),
      'every viewer after the invalidation sees the change',
    );
    assert.equal(counter.computations, 2, 'the viewers after it share one computation');
    assert.equal((await cache.get()).counts.failed, before + 1);
    assert.equal(counter.computations, 2, 'and then the new snapshot is served for its interval');
  } finally {
    cache.stop();
  }
});

test('a computation that began before invalidate() is not joined, and does not replace the one begun after it', async () => {
  await insertJob(db.pool, { status: 'cancelled', queue: 'sc-inv-race' });
  // The first computation is held at its connection until released.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let calls = 0;
  const slow = new Proxy(db.pool, {
    get(t, prop) {
      if (prop === 'connect') return async () => (++calls === 1 && (await held), t.connect());
      const v = Reflect.get(t, prop, t);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  }) as pg.Pool;
  const cache = new StatsCache(slow, { leaseMs: 30_000, minRefreshMs: 60_000 });
  try {
    const early = cache.get(); // computation 1, held before it reads anything
    await waitFor('the first computation to ask for its connection', async () => calls === 1, { intervalMs: 5 });
    cache.invalidate();
    const late = await cache.get();
    assert.equal(calls, 2, 'the computation begun before the invalidation was not joined');
    release();
    const first = await early;
    assert.ok(first.computedAt.getTime() >= late.computedAt.getTime(), 'computation 1 finished last');
    assert.equal(
      (await cache.get()).computedAt.getTime(),
      late.computedAt.getTime(),
      'the snapshot stays the one begun after the invalidation (one begun before it may predate the change)',
    );
    assert.equal(calls, 2);
  } finally {
    release();
    cache.stop();
  }
});

test('operator actions in quick succession: at most two computations run at once, and the viewers after them share a third', async () => {
  await insertJob(db.pool, { status: 'cancelled', queue: 'sc-inv-burst' });
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let calls = 0;
  const slow = new Proxy(db.pool, {
    get(t, prop) {
      if (prop === 'connect') return async () => (++calls, await held, t.connect());
      const v = Reflect.get(t, prop, t);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  }) as pg.Pool;
  const cache = new StatsCache(slow, { leaseMs: 30_000, minRefreshMs: 60_000 });
  try {
    const viewers = [cache.get()];
    for (let k = 0; k < 5; k++) {
      cache.invalidate(); // an action
      viewers.push(cache.get()); // and the page that made it
    }
    await waitFor('two computations to ask for a connection', async () => calls === 2, { intervalMs: 5 });
    release();
    const seen = await Promise.all(viewers);
    assert.equal(calls, 3, 'the last four viewers shared one computation, begun after the first two ended');
    const last = seen[seen.length - 1]!;
    assert.ok(seen.slice(2).every((v) => v.computedAt.getTime() === last.computedAt.getTime()));
  } finally {
    release();
    cache.stop();
  }
});

test('the overview tells Redis configured but not answering from Redis not configured', async () => {
  const { computeConsoleStats } = await import('./console-stats');
  const { PgDoorbell, RedisDoorbell } = await import('./signal');
  const { createLogger } = await import('../log');
  // A port nothing listens on: configured, never ready.
  const away = new RedisDoorbell('redis://127.0.0.1:1', 'lh_stats_away', db.pool, createLogger({ test: 'stats' }));
  try {
    const down = await computeConsoleStats(db.pool, { leaseMs: 30_000, doorbell: away });
    assert.deepEqual([down.signal.usingRedis, down.signal.redisConfigured], [false, true]);
    const none = await computeConsoleStats(db.pool, { leaseMs: 30_000, doorbell: new PgDoorbell(db.pool) });
    assert.deepEqual([none.signal.usingRedis, none.signal.redisConfigured], [false, false]);
  } finally {
    await away.close();
  }
});

/** Two snapshots a second apart on the database clock: the rate point between them. */
async function aRatePoint(cache: StatsCache) {
  const first = await cache.get();
  await waitFor('a second to pass on the database clock', async () =>
    (await db.pool.query(`SELECT now() - $1::timestamptz > interval '1.1 s' AS ok`, [first.computedAt])).rows[0].ok,
  );
  cache.invalidate();
  const point = (await cache.get()).throughput.points.at(-1);
  assert.ok(point, 'a rate point');
  return point;
}

test('the dead-letter series counts the failed jobs themselves: failures no worker counted (its process killed mid-burst) are charted', async () => {
  const cache = new StatsCache(db.pool, { leaseMs: 30_000, minRefreshMs: 60_000 });
  try {
    const point = await aRatePoint(cache);
    // Five jobs dead-lettered in that point's bucket, by no worker (the workers table holds no counts).
    for (let i = 0; i < 5; i++) {
      const id = await insertJob(db.pool, { status: 'failed', queue: 'sc-dead' });
      // At the bucket's start: a time already past (the series count up to the read's time).
      await db.pool.query(`UPDATE jobs SET finished_at = to_timestamp($2::float8 / 1000) WHERE job_id = $1`, [id, point.t]);
    }
    cache.invalidate();
    const third = await cache.get();
    assert.equal(third.workerTotals.failed, 0);
    const charted = third.throughput.points.find((p) => p.t === point.t)!;
    assert.ok(charted.failed >= 5 / (third.throughput.bucketMs / 1000), `failed ${charted.failed}/s in the bucket`);
  } finally {
    cache.stop();
  }
});

test('the lease-lost series counts the lost attempts themselves: recoveries no worker lived to report are charted', async () => {
  const cache = new StatsCache(db.pool, { leaseMs: 30_000, minRefreshMs: 60_000 });
  try {
    const point = await aRatePoint(cache);
    // Four attempts lost in that point's bucket, recovered by no worker that reported it.
    for (let i = 0; i < 4; i++) {
      const id = await insertJob(db.pool, { status: 'retrying', queue: 'sc-lost-series', attemptCount: 1 });
      await db.pool.query(
        `INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome)
         VALUES ($1, 1, 'gone:1:cccccc', to_timestamp($2::float8 / 1000), to_timestamp($2::float8 / 1000), 'lease_lost')`,
        [id, point.t],
      );
    }
    cache.invalidate();
    const third = await cache.get();
    assert.equal(third.workerTotals.recovered, 0);
    const charted = third.throughput.points.find((p) => p.t === point.t)!;
    assert.ok(charted.recovered >= 4 / (third.throughput.bucketMs / 1000), `lease lost ${charted.recovered}/s in the bucket`);
  } finally {
    cache.stop();
  }
});

test('job types: what each queue and type did between the earliest sample of the window and the latest, from the worker rows', async () => {
  const cache = new StatsCache(db.pool, { leaseMs: 30_000, minRefreshMs: 60_000, typesMinSampleMs: 0 });
  try {
    const workerId = `sc-types:${process.pid}:${Date.now()}`;
    await ops.workerRegister(db.pool, { workerId, host: 'test', pid: 1, queues: ['sc-types'], concurrency: 1 });
    const tally = new TypeTally();
    const kind = { queue: 'sc-types', type: 'email.send' };
    const beat = () => ops.workerHeartbeat(db.pool, workerId, { byType: tally.snapshot() });
    // Before the window: counted in the earliest sample, so not in the window.
    for (let i = 0; i < 10; i++) tally.count(kind, 'completed');
    await beat();
    const first = await cache.get();
    assert.equal(first.types.since, null, 'one sample at most: nothing to compare yet');
    assert.deepEqual(first.types.rows, []);
    // The per-type samples come with the sampler's ticks (every 5 s). Two taken before anything
    // more happens: both hold the 10 completions, and nothing ended between them.
    const quiet = await waitFor('two per-type samples', async () => {
      const s = await cache.get();
      return s.types.since !== null && s;
    });
    assert.deepEqual(quiet.types.rows.filter((r) => r.queue === 'sc-types'), [], 'nothing ended between the two samples');
    // In the window: 4 completed (3 ms each), one retried and one to the dead letter (400 ms each).
    for (let i = 0; i < 4; i++) {
      tally.count(kind, 'completed');
      tally.observeRunTime(kind, 3);
    }
    tally.count(kind, 'retried');
    tally.count(kind, 'failed');
    tally.observeRunTime(kind, 400);
    tally.observeRunTime(kind, 400);
    await beat();
    await waitFor('a second to pass on the database clock', async () =>
      (await db.pool.query(`SELECT now() - $1::timestamptz > interval '1.1 s' AS ok`, [first.computedAt])).rows[0].ok,
    );
    const second = await waitFor('a per-type sample after the heartbeat', async () => {
      const s = await cache.get();
      return s.types.rows.some((r) => r.queue === 'sc-types') && s;
    });
    assert.equal(second.types.windowMs, TYPES_WINDOW_MS);
    assert.ok(second.types.since && second.types.until && second.types.since < second.types.until);
    const row = second.types.rows.find((r) => r.queue === 'sc-types' && r.type === 'email.send');
    assert.ok(row, 'a row for the kind');
    assert.deepEqual([row.completed, row.retried, row.failed, row.cancelled, row.runs], [4, 1, 1, 0, 6]);
    assert.ok(row.runP50Ms! > 1 && row.runP50Ms! <= 5, `median ${row.runP50Ms} ms: in the (1, 5] ms bucket`);
    assert.ok(row.runP95Ms! > 250 && row.runP95Ms! <= 500, `p95 ${row.runP95Ms} ms: in the (250, 500] ms bucket`);
    // The console's JSON carries it as the schema says.
    assert.equal(statsSnapshotDto(second).types.since, second.types.since.toISOString());
  } finally {
    cache.stop();
  }
});

test('job types: lost leases are read from the attempts themselves, those no worker lived to report included; one before the window is not', async () => {
  const cache = new StatsCache(db.pool, { leaseMs: 30_000, minRefreshMs: 60_000, typesMinSampleMs: 0 });
  try {
    const queue = `sc-lost-${process.pid}-${Date.now()}`;
    const id = await insertJob(db.pool, { queue, type: 'poison', status: 'retrying', attemptCount: 2 });
    // Lost an hour ago: before any window.
    await db.pool.query(
      `INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome) VALUES ($1, 1, 'gone:1:aaaaaa', now() - interval '1 hour', now() - interval '1 hour', 'lease_lost')`,
      [id],
    );
    const first = await waitFor('two per-type samples', async () => {
      const s = await cache.get();
      return s.types.since !== null && s;
    });
    assert.equal(first.types.rows.find((r) => r.queue === queue), undefined, 'the hour-old loss is outside the window');
    // Lost now, its recovering worker killed before any heartbeat: no worker row counts it.
    await db.pool.query(
      `INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome) VALUES ($1, 2, 'gone:2:bbbbbb', now(), now(), 'lease_lost')`,
      [id],
    );
    const second = await waitFor('a per-type sample after the loss', async () => {
      const s = await cache.get();
      return s.types.rows.some((r) => r.queue === queue) && s;
    });
    const row = second.types.rows.find((r) => r.queue === queue)!;
    assert.deepEqual([row.type, row.leaseLost, row.completed, row.retried, row.failed, row.runs], ['poison', 1, 0, 0, 0, 0]);
  } finally {
    cache.stop();
  }
});
