/**
 * GET /api/metrics and /api/health against real worker processes on real jobs: the
 * scrape is parsed with a Prometheus text-format parser, and the counters summed from
 * the workers' heartbeats move while the jobs run.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import parsePrometheusTextFormat, { type PromFamily } from 'parse-prometheus-text-format';
import { cleanup } from '../../../test/cleanup';
import { testDatabase } from '../../../test/db';
import { REDIS_URL } from '../../../test/env';
import { startWorkers, uniquePrefix } from '../../../test/processes';
import { waitFor } from '../../../test/wait';

const db = await testDatabase();
const prefix = uniquePrefix('metrics');
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = prefix;
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const metrics = await import('./route');
const health = await import('../health/route');
const jobs = await import('../jobs/route');

async function scrape() {
  const res = await metrics.GET();
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusTextFormat(await res.text());
  const byName = new Map(families.map((f) => [f.name, f]));
  const family = (name: string): PromFamily => {
    const f = byName.get(name);
    assert.ok(f, `metric ${name} is exposed`);
    return f;
  };
  const value = (name: string, labels: Record<string, string> = {}) => {
    const m = family(name).metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
    return m ? Number(m.value) : undefined;
  };
  return { families, family, value };
}

const N = 40;
const FAILING = 4;

test('a scrape during a real run: counters move, histograms are cumulative, gauges match the jobs', async () => {
  const before = await scrape();
  assert.equal(before.value('leasehold_jobs_claimed_total'), 0);
  assert.equal(before.value('leasehold_redis_in_use'), 1, 'in use from the first scrape, while the connection is still being made');
  assert.equal(before.family('leasehold_jobs_claimed_total').type, 'COUNTER');
  assert.equal(before.family('leasehold_job_run_seconds').type, 'HISTOGRAM');
  assert.ok(before.value('process_cpu_user_seconds_total')! >= 0, "the console's own default metrics");

  const workers = startWorkers({
    databaseUrl: db.url,
    redisUrl: REDIS_URL,
    prefix,
    processes: 2,
    concurrency: 3,
    heartbeatMs: 100,
  });
  cleanup(() => workers.stop());
  await waitFor('two live workers in the metrics', async () => (await scrape()).value('leasehold_workers_alive') === 2, { timeoutMs: 30_000 });

  const body = [
    ...Array.from({ length: N - FAILING }, () => ({ type: 'demo.sleep', payload: { ms: 150 } })),
    ...Array.from({ length: FAILING }, () => ({ type: 'demo.sleep', payload: { ms: 20, failTimes: 1 } })),
  ];
  const res = await jobs.POST(new Request('http://test/api/jobs', { method: 'POST', body: JSON.stringify(body) }));
  assert.equal(res.status, 202);

  // Scrape while the jobs run until every one is completed, keeping what each scrape saw.
  const seen: { claimed: number; completed: number }[] = [];
  await waitFor(
    'every job completed, as the counters tell',
    async () => {
      const s = await scrape();
      const claimed = s.value('leasehold_jobs_claimed_total')!;
      const completed = s.value('leasehold_jobs_completed_total')!;
      seen.push({ claimed, completed });
      return completed === N;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  for (let k = 1; k < seen.length; k++) {
    assert.ok(seen[k]!.claimed >= seen[k - 1]!.claimed, 'claims never go down');
    assert.ok(seen[k]!.completed >= seen[k - 1]!.completed, 'completions never go down');
  }
  const distinct = new Set(seen.map((x) => x.completed));
  assert.ok(distinct.size >= 3, `completions moved while the jobs ran (values seen: ${[...distinct].join(', ')})`);
  assert.ok(seen.some((x) => x.completed > 0 && x.completed < N), 'a scrape saw the run half done');

  const after = await scrape();
  assert.equal(after.value('leasehold_jobs_claimed_total'), N + FAILING, 'each failing job was claimed twice');
  assert.equal(after.value('leasehold_jobs_retried_total'), FAILING);
  assert.equal(after.value('leasehold_jobs_failed_total'), 0);
  assert.equal(after.value('leasehold_leases_lost_total'), 0);

  const run = after.family('leasehold_job_run_seconds').metrics[0]!;
  assert.equal(Number(run.count), N + FAILING, 'one run-time observation per attempt');
  const bounds = Object.keys(run.buckets!).filter((b) => b !== '+Inf').map(Number).sort((a, b) => a - b);
  const cumulative = bounds.map((b) => Number(run.buckets![String(b)]));
  for (let k = 1; k < cumulative.length; k++) assert.ok(cumulative[k]! >= cumulative[k - 1]!, 'buckets are cumulative');
  assert.equal(Number(run.buckets!['+Inf'] ?? run.count), N + FAILING);
  // Seconds, not milliseconds. Only what a loaded machine cannot change is asserted: a run
  // takes at least what it sleeps, never less (no 150 ms run fits under 0.1), however much more.
  const fast = Number(run.buckets!['0.1']);
  assert.ok(fast <= 2 * FAILING, `within 100 ms: ${fast}, more than the ${2 * FAILING} attempts of the 20 ms jobs`);
  assert.ok(Number(run.sum) >= (N - FAILING) * 0.15, 'the sum is in seconds, at least what the runs slept');
  assert.ok(Number(run.sum) < (N + FAILING) * 10, `the sum is in seconds, not milliseconds (${run.sum})`);
  const wait = after.family('leasehold_job_queue_wait_seconds').metrics[0]!;
  assert.equal(Number(wait.count), N + FAILING);
  // Per queue and job type, summed over both processes: the same attempts (read at most every
  // 15 s per console process, lib/metrics/source.ts: wait for a read after the run).
  const kind = { queue: 'default', type: 'demo.sleep' };
  const perType = await waitFor('the per-type counters to show the run', async () => {
    const s = await scrape();
    return s.value('leasehold_job_outcomes_total', { ...kind, outcome: 'completed' }) === N && s;
  }, { timeoutMs: 40_000, intervalMs: 500 });
  assert.equal(perType.family('leasehold_job_outcomes_total').type, 'COUNTER');
  assert.equal(perType.value('leasehold_job_outcomes_total', { ...kind, outcome: 'retried' }), FAILING);
  assert.equal(perType.value('leasehold_job_outcomes_total', { ...kind, outcome: 'failed' }), 0);
  const text = await (await metrics.GET()).text();
  const sample = (series: string) => Number(text.split('\n').find((l) => l.startsWith(`${series} `))?.split(' ')[1]);
  const labels = 'queue="default",type="demo.sleep"';
  assert.equal(sample(`leasehold_job_type_run_seconds_count{${labels}}`), N + FAILING);
  assert.equal(sample(`leasehold_job_type_run_seconds_bucket{${labels},le="0.1"}`), fast, 'the same attempts as the process-wide histogram');

  // Job counts are cached for a few seconds per process, then show the finished run.
  await waitFor('the job gauge to show every job completed', async () => (await scrape()).value('leasehold_jobs', { queue: 'default', status: 'completed' }) === N, { timeoutMs: 20_000, intervalMs: 250 });
  const done = await scrape();
  assert.equal(done.value('leasehold_jobs', { queue: 'default', status: 'queued' }), 0);
  assert.equal(done.value('leasehold_signal_backlog', { queue: 'default' }), 0, 'the Redis list was drained');
  assert.equal(done.value('leasehold_redis_in_use'), 1);
  assert.ok(done.value('leasehold_jobs_counted_age_seconds')! < 10);

  await workers.stop();
  await waitFor('no live workers, counters kept after the processes stopped', async () => {
    const s = await scrape();
    return s.value('leasehold_worker_jobs_in_flight') === 0 && s.value('leasehold_jobs_completed_total') === N;
  });
});

test('GET /api/health answers without the database; ?ready checks PostgreSQL and reports Redis', async () => {
  const live = await health.GET(new Request('http://test/api/health'));
  assert.deepEqual(await live.json(), { ok: true });
  const ready = await health.GET(new Request('http://test/api/health?ready'));
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { ok: true, postgres: 'ok', redis: 'in use', signal: 'redis' });
});

test('leasehold_workers_alive counts a worker alive within one lease, as the console and the CLI do', async () => {
  // The console's lease is the default 30 s: a worker quiet for 45 s is stale there.
  // Three live and one quiet: 3 counted by the lease, 4 by a minute. (The count is cached a
  // few seconds, so the first scrapes may still show the run above: 2 workers, or 0.)
  await db.pool.query(
    `INSERT INTO workers (worker_id, host, pid, queues, concurrency, started_at, heartbeat_at)
     SELECT 'w-metrics-' || k, 'm-host', 4240 + k, '{default}', 2, now() - interval '1 hour',
            now() - CASE WHEN k = 0 THEN interval '45 seconds' ELSE interval '1 second' END
       FROM generate_series(0, 3) AS k`,
  );
  cleanup(() => db.pool.query(`DELETE FROM workers WHERE worker_id LIKE 'w-metrics-%'`));
  const alive = await waitFor('a count with the new rows', async () => {
    const n = (await scrape()).value('leasehold_workers_alive');
    return n === 3 || n === 4 ? n : null;
  }, { timeoutMs: 20_000, intervalMs: 250 });
  assert.equal(alive, 3, 'the quiet worker is not counted');
  assert.equal((await scrape()).value('leasehold_queue_workers_alive', { queue: 'default' }), 3, 'per queue, likewise');
});

test('the oldest due job per queue says which queue is paused, so an alert can leave a deliberate pause out', async () => {
  const { queueSetControls } = await import('@/lib/queue/ops');
  // No worker serves these queues: their jobs stay due. The run_at in the past ages them at once.
  await db.pool.query(
    `INSERT INTO jobs (queue, type, payload, run_at)
     VALUES ('m-held', 'demo.sleep', '{}', now() - interval '90 seconds'),
            ('m-late', 'demo.sleep', '{}', now() - interval '30 seconds')`,
  );
  await queueSetControls(db.pool, { name: 'm-held', paused: true });
  cleanup(() => db.pool.query(`DELETE FROM jobs WHERE queue IN ('m-held', 'm-late'); DELETE FROM queues WHERE name = 'm-held'`));
  const s = await waitFor('both queues in the per-queue gauge', async () => {
    const s = await scrape();
    return s.value('leasehold_queue_oldest_due_job_age_seconds', { queue: 'm-held' }) !== undefined &&
      s.value('leasehold_queue_oldest_due_job_age_seconds', { queue: 'm-late' }) !== undefined ? s : null;
  }, { timeoutMs: 20_000, intervalMs: 250 });
  const series = s.family('leasehold_queue_oldest_due_job_age_seconds').metrics;
  const held = series.find((m) => m.labels?.queue === 'm-held')!;
  const late = series.find((m) => m.labels?.queue === 'm-late')!;
  assert.equal(held.labels!.paused, 'true');
  assert.equal(late.labels!.paused, 'false');
  assert.ok(Number(held.value) >= 90 && Number(held.value) < 150, `the paused queue's job waited 90 s and more (${held.value})`);
  assert.ok(Number(late.value) >= 30 && Number(late.value) < 90, `the other queue's job waited 30 s and more (${late.value})`);
  assert.ok(s.value('leasehold_oldest_due_job_age_seconds')! >= 90, 'the overall gauge still counts the paused queue');
  assert.ok(!series.some((m) => m.labels?.queue === 'default'), 'no series for a queue with nothing due');
  assert.equal(s.value('leasehold_queue_workers_alive', { queue: 'm-late' }), 0, 'jobs wait and no worker consumes their queue: one alert');
});
