/**
 * Worker rows silent for a week are folded into the archive row and deleted: every total read
 * over the workers' counters (the console's, the scrape's, the job types') stays the same.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../../test/db';
import { readWorkerTotals as scrapeTotals } from '../metrics/source';
import { computeConsoleStats } from './console-stats';
import { readTypeTotals } from './type-metrics';
import { foldOldWorkers, readWorkerTotals } from './worker-totals';

const db = await testDatabase();

const report = (n: number) => ({
  claimed: 10 * n,
  completed: 8 * n,
  failed: n,
  retried: n,
  leaseLost: 0,
  recovered: n,
  inFlight: n,
  running: n,
  rssBytes: 1e8,
  quiet: false,
  queueWaitMs: { counts: [n, n, 0], sum: 3 * n, count: 2 * n },
  runTimeMs: { counts: [0, n, n], sum: 30 * n, count: 2 * n },
  byType: [{ queue: 'f', type: 'mail', completed: 8 * n, retried: n, failed: n, cancelled: 0, runTimeMs: { counts: [0, n, n], sum: 30 * n, count: 2 * n } }],
});

async function worker(id: string, n: number, silentFor: string, stopped: boolean) {
  await db.pool.query(
    `INSERT INTO workers (worker_id, host, pid, queues, concurrency, metrics, started_at, heartbeat_at, stopped_at)
     VALUES ($1, 'fold', 1, '{f}', 1, $2::jsonb, now() - $3::interval, now() - $3::interval, CASE WHEN $4 THEN now() - $3::interval END)`,
    [id, JSON.stringify(report(n)), silentFor, stopped],
  );
}

const totals = async () => ({
  console: (await readWorkerTotals(db.pool)).totals,
  scrape: await scrapeTotals(db.pool),
  types: await readTypeTotals(db.pool),
});

test('rows silent for a week are folded into the archive; no total moves, live gauges included', async () => {
  await worker('fold:1:stopped', 1, '8 days', true);
  await worker('fold:2:died', 2, '10 days', false);
  await worker('fold:3:recent', 3, '1 day', true);
  await worker('fold:4:live', 4, '0 s', false);
  const before = await totals();
  assert.equal(before.console.completed, 8 * (1 + 2 + 3 + 4));
  assert.equal(before.scrape.inFlight, 4, 'only the live one is in flight');

  assert.equal(await foldOldWorkers(db.pool), 2);
  const { rows } = await db.pool.query(`SELECT worker_id FROM workers WHERE host = 'fold' ORDER BY worker_id`);
  assert.deepEqual(rows.map((r) => r.worker_id), ['fold:3:recent', 'fold:4:live']);
  const { rows: archive } = await db.pool.query(`SELECT workers, metrics FROM worker_totals_archive`);
  assert.equal(archive[0].workers, 2);
  assert.equal(archive[0].metrics.inFlight, undefined, 'what a process was doing is not archived');
  assert.deepEqual(await totals(), before);

  // Nothing more to fold; a row that goes silent later is added to the same archive.
  assert.equal(await foldOldWorkers(db.pool), 0);
  await db.pool.query(`UPDATE workers SET heartbeat_at = now() - interval '8 days' WHERE worker_id = 'fold:3:recent'`);
  assert.equal(await foldOldWorkers(db.pool), 1);
  assert.equal((await db.pool.query(`SELECT workers FROM worker_totals_archive`)).rows[0].workers, 3);
  assert.deepEqual(await totals(), before);
});

test('a malformed counter (a row written by hand, or by another version) adds nothing, and fails no read', async () => {
  const read = async () => ({
    console: (await readWorkerTotals(db.pool)).totals,
    overview: (await computeConsoleStats(db.pool, { leaseMs: 30_000 })).workerTotals,
    scrape: (await scrapeTotals(db.pool)).counters,
  });
  const before = await read();
  await db.pool.query(
    `INSERT INTO workers (worker_id, host, pid, queues, concurrency, metrics, started_at, heartbeat_at)
     VALUES ('odd:1', 'odd', 1, '{f}', 1, $1::jsonb, now(), now())`,
    [JSON.stringify({ claimed: 'twelve', completed: { n: 1 }, failed: null, retried: [1], recovered: 3, runTimeMs: { sum: 'x', count: 1 } })],
  );
  const after = await read();
  for (const [what, totals] of Object.entries(after)) {
    const was = before[what as keyof typeof before] as Record<string, number>;
    assert.deepEqual(
      Object.fromEntries(['claimed', 'completed', 'failed', 'retried', 'recovered'].map((k) => [k, (totals as Record<string, number>)[k]! - was[k]!])),
      { claimed: 0, completed: 0, failed: 0, retried: 0, recovered: 3 },
      what,
    );
  }
});
