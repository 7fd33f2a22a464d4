/**
 * A ring that falls back to PostgreSQL NOTIFY is counted on /api/metrics: the console's
 * Redis (a throwaway redis-server of this test's own) is killed, a job is enqueued through
 * the API, leasehold_signal_notify_fallbacks_total{source="console"} goes up, and a real
 * worker process still claims and completes the job.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { createLogger } from '../../../lib/log';
import { queueKey, RedisDoorbell } from '../../../lib/queue/signal';
import { cleanup } from '../../../test/cleanup';
import { testDatabase } from '../../../test/db';
import { REDIS_URL } from '../../../test/env';
import { jobRow } from '../../../test/factories';
import { startWorkers, uniquePrefix } from '../../../test/processes';
import { ownRedis } from '../../../test/redis-server';
import { waitFor } from '../../../test/wait';

const db = await testDatabase();
const redis = await ownRedis();
const prefix = uniquePrefix('fallback');
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = redis.url;
process.env.LEASEHOLD_REDIS_PREFIX = prefix;
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const metrics = await import('./route');
const jobs = await import('../jobs/route');

async function fallbacks(source: 'console' | 'workers'): Promise<number> {
  const res = await metrics.GET();
  assert.equal(res.status, 200);
  const family = parsePrometheusTextFormat(await res.text()).find((f) => f.name === 'leasehold_signal_notify_fallbacks_total');
  assert.ok(family, 'leasehold_signal_notify_fallbacks_total is exposed');
  assert.equal(family.type, 'COUNTER');
  return Number(family.metrics.find((m) => m.labels?.source === source)?.value);
}

async function enqueue(queue: string): Promise<string> {
  const res = await jobs.POST(new Request('http://test/api/jobs', { method: 'POST', body: JSON.stringify({ type: 'demo.sleep', queue, payload: { ms: 1 } }) }));
  assert.equal(res.status, 202);
  return String((await res.json()).id);
}

test('Redis gone under an enqueue: the ring goes by NOTIFY, the counter says so, and the job is still claimed', async () => {
  const queue = prefix;
  const w = startWorkers({ databaseUrl: db.url, redisUrl: redis.url, prefix, processes: 1, concurrency: 2, queues: queue });
  cleanup(() => w.stop());
  try {
    await waitFor('the worker to start', () => /worker process started/.test(w.output()), { timeoutMs: 30_000 });
    // With Redis up the ring is a push: nothing falls back.
    const first = await enqueue(queue);
    await waitFor('the first job to complete', async () => (await jobRow(db.pool, first)).status === 'completed', { timeoutMs: 20_000 });
    assert.equal(await fallbacks('console'), 0);
    assert.equal(await fallbacks('workers'), 0);

    await redis.kill();
    const second = await enqueue(queue);
    await waitFor('the console to count the ring that went by NOTIFY', async () => (await fallbacks('console')) >= 1, { timeoutMs: 10_000 });
    await waitFor('the worker to claim and complete the job without Redis', async () => (await jobRow(db.pool, second)).status === 'completed', { timeoutMs: 30_000 });
    assert.equal((await jobRow(db.pool, second)).attempt_count, 1);
  } finally {
    await w.stop();
  }
});

test('a push Redis refuses while connected (here WRONGTYPE; READONLY on a replica after a failover) is counted too, and the ring goes by NOTIFY', async () => {
  const own = uniquePrefix('refused');
  const warned: string[] = [];
  const logger = { ...createLogger({ test: 'refused' }), warn: (msg: string) => void warned.push(msg) };
  const bell = new RedisDoorbell(REDIS_URL, own, db.pool, logger);
  try {
    await bell.settled(5_000);
    assert.ok(bell.usingRedis);
    await bell.redis.set(queueKey(own, 'q'), 'not a list');
    await bell.ring([{ jobId: '1', queue: 'q' }, { jobId: '2', queue: 'q' }]);
    assert.equal(bell.notifyFallbacks, 2);
    assert.equal(warned.filter((m) => /went by PostgreSQL NOTIFY/.test(m)).length, 1);
    await bell.ring([{ jobId: '3', queue: 'ok' }]); // a list: pushed, not counted
    assert.equal(bell.notifyFallbacks, 2);
  } finally {
    await bell.redis.del(queueKey(own, 'q'), queueKey(own, 'ok'));
    await bell.close();
  }
});
