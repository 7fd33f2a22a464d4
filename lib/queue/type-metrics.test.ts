/** Per job type figures: a worker's tally, the quantiles of a bucketed run time, and what changed between two samples. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DURATION_BUCKETS_MS } from './histogram';
import { histogramQuantile, TypeTally, type TypeOutcome, type TypeTotals, typeWindow, withLostLeases } from './type-metrics';

const buckets = (at: Record<number, number>) => DURATION_BUCKETS_MS.map((_, k) => at[k] ?? 0).concat(at[DURATION_BUCKETS_MS.length] ?? 0);

test('a tally keeps each queue and type apart, outcomes and run times', () => {
  const t = new TypeTally();
  t.count({ queue: 'mail', type: 'email.send' }, 'completed');
  t.count({ queue: 'mail', type: 'email.send' }, 'completed');
  t.count({ queue: 'mail', type: 'email.send' }, 'retried');
  t.count({ queue: 'bulk', type: 'email.send' }, 'failed');
  t.count({ queue: 'bulk', type: 'email.send' }, 'cancelled', 3);
  t.count({ queue: 'bulk', type: 'email.send' }, 'leaseLost');
  t.observeRunTime({ queue: 'mail', type: 'email.send' }, 4);
  t.observeRunTime({ queue: 'mail', type: 'email.send' }, 700);
  const snap = t.snapshot();
  assert.equal(snap.length, 2);
  const mail = snap.find((s) => s.queue === 'mail')!;
  assert.deepEqual({ ...mail, runTimeMs: undefined }, { queue: 'mail', type: 'email.send', completed: 2, retried: 1, failed: 0, cancelled: 0, snoozed: 0, leaseLost: 0, runTimeMs: undefined });
  assert.deepEqual(mail.runTimeMs, { counts: buckets({ 1: 1, 8: 1 }), sum: 704, count: 2 });
  const bulk = snap.find((s) => s.queue === 'bulk')!;
  assert.equal(bulk.failed, 1);
  assert.equal(bulk.cancelled, 3);
  assert.equal(bulk.leaseLost, 1);
  assert.equal(bulk.runTimeMs.count, 0);
  assert.doesNotThrow(() => JSON.parse(JSON.stringify(snap)), 'what a heartbeat carries is plain JSON');
});

test('quantiles are interpolated within their bucket, as histogram_quantile does', () => {
  assert.equal(histogramQuantile(buckets({}), 0.5), null);
  // 10 runs in (5, 10] ms: the median halfway through the bucket.
  assert.equal(histogramQuantile(buckets({ 2: 10 }), 0.5), 7.5);
  // 90 runs ≤ 1 ms and 10 in (100, 250] ms: p50 in the first bucket, p95 halfway through the slow one.
  const skewed = buckets({ 0: 90, 6: 10 });
  assert.equal(histogramQuantile(skewed, 0.5), 50 / 90);
  assert.equal(histogramQuantile(skewed, 0.95), 175);
  // Past the last bound the histogram knows no more than that bound.
  assert.equal(histogramQuantile(buckets({ [DURATION_BUCKETS_MS.length]: 4 }), 0.5), DURATION_BUCKETS_MS[DURATION_BUCKETS_MS.length - 1]);
});

const totals = (queue: string, type: string, n: Partial<Record<TypeOutcome, number>>, run: Record<number, number> = {}): TypeTotals => {
  const counts = buckets(run);
  const count = counts.reduce((a, b) => a + b, 0);
  return { queue, type, completed: 0, retried: 0, failed: 0, cancelled: 0, snoozed: 0, leaseLost: 0, ...n, runTimeMs: { counts, sum: count * 3, count } };
};

test('a window is the later totals less the earlier: new kinds count from 0, idle ones are left out, the busiest come first', () => {
  const earlier = [totals('mail', 'email.send', { completed: 100, retried: 5 }, { 1: 105 }), totals('default', 'idle', { completed: 7 }, { 0: 7 })];
  const later = [
    totals('mail', 'email.send', { completed: 130, retried: 9, failed: 1 }, { 1: 120, 3: 20 }),
    totals('default', 'idle', { completed: 7 }, { 0: 7 }),
    totals('default', 'report.build', { completed: 2, failed: 50 }, { 9: 52 }),
  ];
  const rows = typeWindow(earlier, later);
  assert.deepEqual(
    rows.map((r) => [r.queue, r.type, r.completed, r.retried, r.failed, r.runs]),
    [
      ['default', 'report.build', 2, 0, 50, 52],
      ['mail', 'email.send', 30, 4, 1, 35],
    ],
  );
  const mail = rows[1]!;
  // 15 runs in (1, 5] ms and 20 in (10, 25]: the median is in the slow bucket.
  assert.equal(mail.runP50Ms, 10 + 15 * ((17.5 - 15) / 20));
  assert.equal(mail.runMeanMs, 3);
});

test('a sum that went down (worker rows deleted) counts as nothing, never as every attempt ever made, nor negative', () => {
  const rows = typeWindow(
    [totals('q', 't', { completed: 500, retried: 3 }, { 0: 503 })],
    [totals('q', 't', { completed: 20, retried: 5 }, { 0: 25 })],
  );
  assert.deepEqual([rows[0]!.completed, rows[0]!.retried, rows[0]!.runs], [0, 2, 0]);
});

test('lost leases count per type, and a kind whose only news is a lost lease is a row; a sample from before they were counted reads as 0, not NaN', () => {
  const old = totals('q', 'poison', { completed: 3 });
  delete (old as Partial<TypeTotals>).leaseLost; // a stats_samples row written by an earlier version
  const rows = typeWindow([old], [totals('q', 'poison', { completed: 3, leaseLost: 2 })]);
  assert.deepEqual(rows.map((r) => [r.type, r.completed, r.leaseLost, r.runs]), [['poison', 0, 2, 0]]);
  assert.deepEqual(typeWindow([totals('q', 'poison', { completed: 3, leaseLost: 2 })], [old]), [], 'missing in the later one: nothing, no NaN row');
});

test('lost leases as the attempts record them replace the workers\' counts; a kind with only those gets a row, sorted in; one with none of anything drops out', () => {
  const rows = typeWindow(
    [totals('q', 'busy', {}), totals('q', 'counted-only', {})],
    [totals('q', 'busy', { completed: 3, leaseLost: 1 }), totals('q', 'counted-only', { leaseLost: 2 })],
  );
  const lost = new Map([
    ['q\u0000busy', { queue: 'q', type: 'busy', n: 4 }],
    ['q\u0000poison', { queue: 'q', type: 'poison', n: 9 }],
  ]);
  assert.deepEqual(
    withLostLeases(rows, lost).map((r) => [r.type, r.completed, r.leaseLost, r.runs, r.runP50Ms]),
    [
      ['poison', 0, 9, 0, null],
      ['busy', 3, 4, 0, null],
    ],
  );
});
