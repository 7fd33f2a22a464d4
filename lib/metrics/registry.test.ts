import assert from 'node:assert/strict';
import { test } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import type { DatabaseHealth } from '../queue/console-stats';
import { DURATION_BUCKETS_MS } from '../queue/histogram';
import { createMetricsRegistry } from './registry';
import { WORKER_COUNTERS } from '../queue/worker-totals';
import { cached, type MetricsSource, type SummedHistogram } from './source';

const HEALTHY = { oldestTransaction: null, deadRows: 120, xidAge: 4_500 };

function fakeSource(h: SummedHistogram, sweptAgoMs: number | null = 2500, database: DatabaseHealth = HEALTHY): MetricsSource {
  const stats = async () => ({
    counts: { queued: 2, running: 1, retrying: 0, completed: 5, failed: 1, cancelled: 0 },
    queues: [{ queue: 'mail', counts: { queued: 2, running: 1, retrying: 0, completed: 5, failed: 1, cancelled: 0 } }],
    oldestQueuedAgeMs: 1500,
    runningExpired: 0,
    workersAlive: 3,
    schedulesFailing: 2,
    schedulesSkipping: 1,
    sweptAgoMs,
    database,
    dbNow: new Date(),
  });
  return {
    stats: Object.assign(stats, { ageMs: () => 0 }),
    workerTotals: async () => ({
      counters: Object.fromEntries(WORKER_COUNTERS.map((k, i) => [k, i + 1])) as never,
      histograms: { queueWaitMs: h, runTimeMs: h },
      inFlight: 4,
      running: 2,
    }),
    typeTotals: async () => [
      { queue: 'mail', type: 'email.send', completed: 40, retried: 3, failed: 1, cancelled: 0, snoozed: 2, leaseLost: 5, runTimeMs: { counts: h.counts, sum: h.sumMs, count: h.count } },
      { queue: 'default', type: 'report.build', completed: 2, retried: 0, failed: 0, cancelled: 1, snoozed: 0, leaseLost: 0, runTimeMs: { counts: new Array(DURATION_BUCKETS_MS.length + 1).fill(0), sum: 0, count: 0 } },
    ],
    backlog: async () => new Map([['mail', 7]]),
    usingRedis: async () => true,
  };
}

test('+Inf and _count are the buckets\' own total: a count read in another snapshot never leaves a finite bucket above +Inf', async () => {
  const counts = new Array(DURATION_BUCKETS_MS.length + 1).fill(0);
  counts[0] = 6; // a heartbeat between the two reads: the buckets have six, the totals four
  const text = await createMetricsRegistry(fakeSource({ counts, sumMs: 4, count: 4 }), { defaultMetrics: false }).metrics();
  for (const name of ['leasehold_job_run_seconds', 'leasehold_job_queue_wait_seconds']) {
    const m = parsePrometheusTextFormat(text).find((f) => f.name === name)!.metrics[0]!;
    assert.deepEqual([m.buckets!['0.001'], m.buckets!['+Inf'], m.count], ['6', '6', '6'], name);
  }
  // Per type (read as text: the parser drops a labelled histogram's labels and count).
  const line = (suffix: string) => new RegExp(`^leasehold_job_type_run_seconds_${suffix} (\\S+)$`, 'm').exec(text)?.[1];
  assert.deepEqual(
    [line('bucket\\{queue="mail",type="email.send",le="0.001"\\}'), line('bucket\\{queue="mail",type="email.send",le="\\+Inf"\\}'), line('count\\{queue="mail",type="email.send"\\}')],
    ['6', '6', '6'],
  );
});

test('per-bucket counts in ms become cumulative `le` buckets in seconds, +Inf = count', async () => {
  const counts = new Array(DURATION_BUCKETS_MS.length + 1).fill(0);
  counts[0] = 1; // ≤ 1 ms
  counts[1] = 2; // ≤ 5 ms
  counts[8] = 4; // ≤ 1 s
  counts[DURATION_BUCKETS_MS.length] = 3; // above every bound
  const text = await createMetricsRegistry(fakeSource({ counts, sumMs: 12_345, count: 10 }), { defaultMetrics: false }).metrics();
  const families = parsePrometheusTextFormat(text);
  const run = families.find((f) => f.name === 'leasehold_job_run_seconds')!;
  assert.equal(run.type, 'HISTOGRAM');
  const b = run.metrics[0]!.buckets!;
  assert.deepEqual([b['0.001'], b['0.005'], b['0.5'], b['1'], b['3600'], b['+Inf']], ['1', '3', '3', '7', '7', '10']);
  assert.equal(run.metrics[0]!.sum, '12.345');
  assert.equal(run.metrics[0]!.count, '10');

  const jobs = families.find((f) => f.name === 'leasehold_jobs')!;
  assert.equal(jobs.type, 'GAUGE');
  assert.equal(jobs.metrics.find((m) => m.labels!.status === 'completed')!.value, '5');
  assert.equal(jobs.metrics.length, 6, 'every status of every queue, zeros included');
  const claimed = families.find((f) => f.name === 'leasehold_jobs_claimed_total')!;
  assert.equal(claimed.type, 'COUNTER');
  assert.equal(claimed.metrics[0]!.value, '1');
  assert.equal(families.find((f) => f.name === 'leasehold_signal_backlog')!.metrics[0]!.labels!.queue, 'mail');
  assert.equal(families.find((f) => f.name === 'leasehold_oldest_due_job_age_seconds')!.metrics[0]!.value, '1.5');
  assert.equal(families.find((f) => f.name === 'leasehold_schedules_failing')!.metrics[0]!.value, '2');
  assert.equal(families.find((f) => f.name === 'leasehold_schedules_skipping')!.metrics[0]!.value, '1');
  assert.equal(families.find((f) => f.name === 'leasehold_recover_sweep_age_seconds')!.metrics[0]!.value, '2.5');
});

test('per queue and job type: outcomes as one labelled counter, run time as a labelled histogram; the unlabelled series stay single', async () => {
  const counts = new Array(DURATION_BUCKETS_MS.length + 1).fill(0);
  counts[2] = 5; // ≤ 10 ms
  counts[9] = 1; // ≤ 2.5 s
  const text = await createMetricsRegistry(fakeSource({ counts, sumMs: 2_540, count: 6 }), { defaultMetrics: false }).metrics();
  const families = parsePrometheusTextFormat(text);
  const outcomes = families.find((f) => f.name === 'leasehold_job_outcomes_total')!;
  assert.equal(outcomes.type, 'COUNTER');
  const value = (queue: string, type: string, outcome: string) =>
    outcomes.metrics.find((m) => m.labels!.queue === queue && m.labels!.type === type && m.labels!.outcome === outcome)?.value;
  assert.equal(value('mail', 'email.send', 'completed'), '40');
  assert.equal(value('mail', 'email.send', 'retried'), '3');
  assert.equal(value('mail', 'email.send', 'failed'), '1');
  assert.equal(value('default', 'report.build', 'cancelled'), '1');
  assert.equal(value('mail', 'email.send', 'snoozed'), '2');
  assert.equal(value('mail', 'email.send', 'lease_lost'), '5', 'spelled as the attempt history spells it');
  assert.equal(outcomes.metrics.length, 12, 'six outcomes for each of the two kinds, zeros included');

  assert.equal(families.find((f) => f.name === 'leasehold_job_type_run_seconds')!.type, 'HISTOGRAM');
  // Read from the text itself: the parser folds a histogram's label sets into one.
  const sample = (series: string) => text.split('\n').find((l) => l.startsWith(`${series} `))?.split(' ')[1];
  const mail = 'queue="mail",type="email.send"';
  assert.deepEqual(
    ['0.005', '0.01', '2.5', '+Inf'].map((le) => sample(`leasehold_job_type_run_seconds_bucket{${mail},le="${le}"}`)),
    ['0', '5', '6', '6'],
  );
  assert.equal(sample(`leasehold_job_type_run_seconds_sum{${mail}}`), '2.54');
  assert.equal(sample(`leasehold_job_type_run_seconds_count{${mail}}`), '6');
  assert.equal(sample('leasehold_job_type_run_seconds_count{queue="default",type="report.build"}'), '0');
  assert.equal(families.find((f) => f.name === 'leasehold_job_run_seconds')!.metrics.length, 1, 'the process-wide histogram keeps one series');
});

test('the sweep age is NaN, not 0 ("just now"), when the sweep never ran', async () => {
  const none = { counts: new Array(DURATION_BUCKETS_MS.length + 1).fill(0), sumMs: 0, count: 0 };
  const text = await createMetricsRegistry(fakeSource(none, null), { defaultMetrics: false }).metrics();
  // prom-client writes "Nan"; Prometheus reads NaN in any case.
  assert.match(parsePrometheusTextFormat(text).find((f) => f.name === 'leasehold_recover_sweep_age_seconds')!.metrics[0]!.value!, /^nan$/i);
});

test("what holds back vacuum: the oldest transaction's age (0 when none), the dead rows in jobs, the xid age", async () => {
  const none = { counts: new Array(DURATION_BUCKETS_MS.length + 1).fill(0), sumMs: 0, count: 0 };
  const value = async (database: DatabaseHealth, name: string) =>
    parsePrometheusTextFormat(await createMetricsRegistry(fakeSource(none, 2500, database), { defaultMetrics: false }).metrics()).find((f) => f.name === name)!.metrics[0]!.value;
  assert.equal(await value(HEALTHY, 'leasehold_db_oldest_transaction_seconds'), '0');
  const held = { ...HEALTHY, oldestTransaction: { ageMs: 754_250, pid: 4242, state: 'idle in transaction', application: 'psql', user: 'ops' } };
  assert.equal(await value(held, 'leasehold_db_oldest_transaction_seconds'), '754.25');
  assert.equal(await value(HEALTHY, 'leasehold_jobs_dead_rows'), '120');
  assert.match((await value({ ...HEALTHY, deadRows: null }, 'leasehold_jobs_dead_rows'))!, /^nan$/i, 'unknown is not 0');
  assert.equal(await value(HEALTHY, 'leasehold_db_xid_age'), '4500');
});

test('cached() shares one in-flight call, reuses the value for its TTL, and does not cache errors', async () => {
  let calls = 0;
  let now = 0;
  let fail = false;
  const get = cached(
    async () => {
      calls++;
      if (fail) throw new Error('down');
      return calls;
    },
    5_000,
    () => now,
  );
  assert.deepEqual(await Promise.all([get(), get(), get()]), [1, 1, 1]);
  now = 4_999;
  assert.equal(await get(), 1);
  now = 5_000;
  fail = true;
  await assert.rejects(get(), /down/);
  fail = false;
  assert.equal(await get(), 3);
  assert.equal(calls, 3);
});

test('cached() by default times its TTL on the monotonic clock: a wall clock stepped back an hour does not keep a value for an hour', async () => {
  const wall = Date.now;
  let offsetMs = 0;
  Date.now = () => wall() + offsetMs; // the wall clock as libfaketime or `date -s` would move it
  try {
    let calls = 0;
    const get = cached(async () => ++calls, 20);
    assert.equal(await get(), 1);
    const t0 = performance.now();
    offsetMs = -3_600_000;
    while (performance.now() - t0 < 40) await new Promise((r) => setTimeout(r, 5));
    assert.equal(await get(), 2, 'read again once its 20 ms had passed');
    assert.ok(get.ageMs()! < 1_000, 'and its age is not an hour off');
  } finally {
    Date.now = wall;
  }
});
