/**
 * The per-type totals summed from the worker rows, against real PostgreSQL: a row whose
 * `byType` is malformed (an older version, a hand edit) adds nothing where it is wrong, and
 * never breaks the sum, the console's table or the scrape.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../../test/db';
import { createMetricsRegistry } from '../metrics/registry';
import { readWorkerTotals } from '../metrics/source';
import { DURATION_BUCKETS_MS } from './histogram';
import { readTypeTotals } from './type-metrics';

const db = await testDatabase();

async function row(workerId: string, metrics: string) {
  await db.pool.query(
    `INSERT INTO workers (worker_id, host, pid, queues, concurrency, metrics) VALUES ($1, 'tm-host', 1, '{tm}', 1, $2::jsonb)`,
    [workerId, metrics],
  );
}

test('a malformed row whose numbers are negative takes no total below 0, and /api/metrics still answers', async () => {
  const counts = new Array(DURATION_BUCKETS_MS.length + 1).fill(0);
  counts[2] = 3;
  await row('tm:1:good', JSON.stringify({ byType: [{ queue: 'tm', type: 't', completed: 3, retried: 1, failed: 0, cancelled: 0, runTimeMs: { counts, sum: 21, count: 3 } }] }));
  const bad = counts.map((n, k) => (k === 2 ? -5 : k === 3 ? -1 : n));
  await row('tm:2:bad', JSON.stringify({ byType: [{ queue: 'tm', type: 't', completed: -5, retried: 1, failed: -1, cancelled: 2, runTimeMs: { counts: bad, sum: -90, count: -6 } }] }));
  const [t] = (await readTypeTotals(db.pool)).filter((r) => r.queue === 'tm');
  assert.ok(t);
  assert.deepEqual([t.completed, t.retried, t.failed, t.cancelled], [0, 2, 0, 2]);
  assert.deepEqual([t.runTimeMs.count, t.runTimeMs.sum, t.runTimeMs.counts[2], t.runTimeMs.counts[3]], [0, 0, 0, 0]);

  const source = {
    stats: Object.assign(async () => ({ counts: {}, queues: [], oldestQueuedAgeMs: 0, runningExpired: 0, workersAlive: 0, schedulesFailing: 0, schedulesSkipping: 0, sweptAgoMs: 0, database: null, dbNow: new Date() }), { ageMs: () => 0 }),
    workerTotals: () => readWorkerTotals(db.pool),
    typeTotals: () => readTypeTotals(db.pool),
    backlog: async () => new Map<string, number>(),
    usingRedis: async () => false,
  } as unknown as Parameters<typeof createMetricsRegistry>[0];
  const text = await createMetricsRegistry(source, { defaultMetrics: false }).metrics();
  assert.match(text, /^leasehold_job_outcomes_total\{queue="tm",type="t",outcome="retried"\} 2$/m);
  assert.match(text, /^leasehold_job_outcomes_total\{queue="tm",type="t",outcome="cancelled"\} 2$/m);
});
