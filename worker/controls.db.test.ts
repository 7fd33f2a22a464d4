/**
 * Queue controls and schedules with real worker processes: a global concurrency limit
 * holds across processes (sampled from the database every 50 ms), a pause stops claims,
 * and a per-second cron ticks once per second across three processes.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { createPool } from '../lib/db/client';
import { createLogger } from '../lib/log';
import * as ops from '../lib/queue/ops';
import { RedisDoorbell } from '../lib/queue/signal';
import { cleanup } from '../test/cleanup';
import { testDatabase } from '../test/db';
import { REDIS_URL } from '../test/env';
import { root, startWorkers, uniquePrefix } from '../test/processes';
import { waitFor } from '../test/wait';

const db = await testDatabase();
const pool = createPool(db.url, { max: 4 });
cleanup(() => pool.end());

async function doorbellFor(prefix: string) {
  const d = new RedisDoorbell(REDIS_URL, prefix, pool, createLogger());
  cleanup(() => d.close());
  await waitFor('redis', () => d.usingRedis);
  return d;
}

const count = async (queue: string, status: string) =>
  (await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = $1 AND status = $2`, [queue, status])).rows[0].n as number;

describe('a global concurrency limit', () => {
  test('a limit of 3 on a queue worked by 4 processes × concurrency 10: never more than 3 running', async () => {
    const prefix = uniquePrefix('limit');
    const queue = prefix;
    await ops.queueSetControls(db.pool, { name: queue, concurrencyLimit: 3 });
    const doorbell = await doorbellFor(prefix);
    const jobs = 60;
    // test.sleep appends its start and end to one file from every process, in the order they
    // happen: the most handlers ever running at once, not a sample every 50 ms.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-limit-'));
    const ledger = path.join(dir, 'ledger');
    const w = startWorkers({
      databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 4, concurrency: 10, queues: queue,
      extra: { LEASEHOLD_HANDLERS: path.join(root, 'test/handlers/faults.ts') },
    });
    try {
      // All four processes are up and waiting before the jobs arrive, so they all compete for
      // the three slots (on a busy machine a late starter would otherwise find the work done).
      await waitFor('four worker processes', async () => (await db.pool.query(`SELECT count(*)::int AS n FROM workers WHERE $1 = ANY(queues)`, [queue])).rows[0].n === 4, { timeoutMs: 60_000 });
      await ops.jobEnqueue(pool, Array.from({ length: jobs }, () => ({ type: 'test.sleep', queue, payload: { ledger, ms: 150 } })), { doorbell });
      await waitFor(`${jobs} jobs to complete`, async () => (await count(queue, 'completed')) === jobs, { timeoutMs: 90_000 });
    } finally {
      await w.stop();
    }
    let running = 0;
    let max = 0;
    const lines = fs.readFileSync(ledger, 'utf8').trim().split('\n');
    fs.rmSync(dir, { recursive: true, force: true });
    for (const line of lines) {
      running += line.startsWith('start ') ? 1 : -1;
      max = Math.max(max, running);
    }
    assert.equal(lines.length, 2 * jobs, 'each job started and ended once');
    console.log(`# most handlers running at once: ${max}`);
    assert.equal(max, 3, 'never more than 3 at once, and the limit was used, not just respected');
    const { rows } = await db.pool.query(
      `SELECT a.worker_id, count(*)::int AS n FROM job_attempts a JOIN jobs j USING (job_id) WHERE j.queue = $1 GROUP BY 1`,
      [queue],
    );
    console.log(`# attempts per process: ${rows.map((r) => r.n).join(', ')}`);
    assert.ok(rows.length >= 2, 'several processes took part');
    // No process keeps the slots to itself (with a fixed poll period one could take them all).
    const most = Math.max(...rows.map((r) => r.n as number));
    assert.ok(most <= (jobs * 3) / 4, `one process ran ${most} of ${jobs} attempts`);
  });

  test('a paused queue is not claimed from; resumed, its jobs run', async () => {
    const prefix = uniquePrefix('pause');
    const queue = prefix;
    await ops.queueSetControls(db.pool, { name: queue, paused: true });
    const doorbell = await doorbellFor(prefix);
    await ops.jobEnqueue(pool, Array.from({ length: 5 }, () => ({ type: 'demo.sleep', queue, payload: { ms: 10 } })), { doorbell });
    const w = startWorkers({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 1, concurrency: 5, queues: queue });
    try {
      await waitFor('the worker to be up', async () => (await db.pool.query(`SELECT 1 FROM workers WHERE $1 = ANY(queues)`, [queue])).rowCount);
      // Several poll cycles (a second each), counted by its reports, however slow the machine:
      // nothing may run while paused.
      const since = (await db.pool.query(`SELECT now() AS t`)).rows[0].t as Date;
      await waitFor('the worker to report for two seconds more', async () =>
        (await db.pool.query(`SELECT 1 FROM workers WHERE $1 = ANY(queues) AND heartbeat_at > $2::timestamptz + interval '2 s'`, [queue, since])).rowCount);
      assert.equal(await count(queue, 'queued'), 5);
      await ops.queueSetControls(db.pool, { name: queue, paused: false });
      await waitFor('the jobs to run after the resume', async () => (await count(queue, 'completed')) === 5);
    } finally {
      await w.stop();
    }
  });

  test('two limited queues share a worker: the second does not wait for the first to drain', async () => {
    const prefix = uniquePrefix('share');
    const [a, c] = [`${prefix}_a`, `${prefix}_c`];
    for (const name of [a, c]) await ops.queueSetControls(db.pool, { name, concurrencyLimit: 50 });
    for (const queue of [a, c]) await ops.jobEnqueue(pool, Array.from({ length: 20 }, () => ({ type: 'demo.sleep', queue, payload: { ms: 100 } })));
    const w = startWorkers({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 1, concurrency: 2, queues: `${a},${c}` });
    try {
      await waitFor('every job to complete', async () => (await count(a, 'completed')) + (await count(c, 'completed')) === 40, { timeoutMs: 90_000 });
    } finally {
      await w.stop();
    }
    // Each claim starts from the next queue: c's first job starts long before a's last ones.
    const { rows } = await db.pool.query(
      `SELECT queue, rank() OVER (ORDER BY started_at, job_id)::int AS nth FROM jobs WHERE queue = ANY($1) ORDER BY started_at, job_id`,
      [[a, c]],
    );
    const firstOfC = rows.find((r) => r.queue === c)!.nth;
    assert.ok(firstOfC <= 10, `the first job of the second queue started ${firstOfC}th of 40`);
  });
});

describe('recurring jobs', () => {
  test('a cron every second across 3 worker processes over 20 s: 20 ± 1 runs, none doubled', async () => {
    const prefix = uniquePrefix('cron');
    const queue = prefix;
    const w = startWorkers({ databaseUrl: db.url, redisUrl: REDIS_URL, prefix, processes: 3, concurrency: 2, queues: queue });
    try {
      await waitFor('3 processes up', async () => (await db.pool.query(`SELECT count(*)::int AS n FROM workers WHERE $1 = ANY(queues) AND stopped_at IS NULL`, [queue])).rows[0].n === 3);
      const { rows: [{ start }] } = await db.pool.query(`SELECT date_trunc('second', now()) + interval '1 second' AS start`);
      await ops.scheduleUpsert(db.pool, { name: prefix, cron: '* * * * * *', type: 'demo.noop', queue });
      // Observe 20 s of ticks (by the database clock), then stop the schedule.
      await waitFor('20 s to pass', async () => (await db.pool.query(`SELECT now() >= $1::timestamptz + interval '20 seconds' AS done`, [start])).rows[0].done, { intervalMs: 200 });
      await ops.scheduleDelete(db.pool, prefix);
      const { rows } = await db.pool.query(
        `SELECT idempotency_key, created_at FROM jobs WHERE queue = $1 AND created_at >= $2::timestamptz AND created_at < $2::timestamptz + interval '20 seconds' ORDER BY created_at`,
        [queue, start],
      );
      const ticks = rows.map((r) => r.idempotency_key as string);
      console.log(`# ${ticks.length} ticks in 20 s`);
      assert.ok(Math.abs(ticks.length - 20) <= 1, `${ticks.length} runs`);
      assert.equal(new Set(ticks).size, ticks.length, 'no tick enqueued twice');
      const seconds = rows.map((r) => Math.floor(new Date(r.created_at).getTime() / 1000));
      assert.equal(new Set(seconds).size, seconds.length, 'one run per second');
      await waitFor('the runs to complete', async () => (await count(queue, 'queued')) + (await count(queue, 'running')) === 0);
      const workers = await db.pool.query(`SELECT count(DISTINCT a.worker_id)::int AS n FROM ended_attempts a JOIN jobs j USING (job_id) WHERE j.queue = $1 AND a.outcome = 'completed'`, [queue]);
      assert.ok(workers.rows[0].n >= 1, 'the runs ran');
    } finally {
      await w.stop();
    }
  });
});
