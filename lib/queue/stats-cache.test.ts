/** The overview's live throughput chart, from samples of the workers' summed counters. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUCKET_MS, throughputOf } from './stats-cache';
import { TOTAL_COUNTERS, type WorkerTotals } from './worker-totals';

const totals = (completed: number): WorkerTotals => ({ ...(Object.fromEntries(TOTAL_COUNTERS.map((k) => [k, 0])) as WorkerTotals), completed, claimed: completed });

/**
 * A worker completing 50 jobs a second, steadily, whose counters reach the database only
 * with its heartbeat (every 10 s, a little early or late), read by the console every second.
 */
function steady(heartbeatOffsetMs: number, minutes = 5, firstSampleMs = 0) {
  const t0 = 1_700_000_000_000 + firstSampleMs;
  const samples: { at: number; totals: WorkerTotals }[] = [];
  let reported = 0;
  for (let at = t0; at <= t0 + minutes * 60_000; at += 1_000) {
    const beats = Math.floor((at - t0 - heartbeatOffsetMs) / 10_000);
    if (beats >= 0) reported = 50 * 10 * (beats + 1);
    samples.push({ at: at + ((at / 1000) % 3 === 0 ? 400 : 0), totals: totals(reported) });
  }
  return samples;
}

test('a steady rate reported at each heartbeat draws a steady line, wherever the heartbeats fall on the buckets and the samples begin', () => {
  for (const offset of [0, 300, 4_900, 9_600, 9_999]) {
    for (const firstSample of [0, 1_000, 8_500, 9_000]) {
      const { points, bucketMs } = throughputOf(steady(offset, 5, firstSample), null);
      assert.equal(bucketMs, BUCKET_MS);
      const rates = points.slice(0, -1).map((p) => p.completed); // the last: the bucket under way
      assert.ok(rates.length > 20);
      for (const rate of rates) assert.ok(rate >= 40 && rate <= 60, `offset ${offset}, first sample +${firstSample} ms: ${rates.join(' ')}`);
    }
  }
});

test('a minute the console did not sample is spread over that minute, not drawn as one spike', () => {
  const samples = steady(0).filter((s) => s.at < 1_700_000_060_000 || s.at >= 1_700_000_120_000);
  const rates = throughputOf(samples, null).points.slice(0, -1).map((p) => p.completed);
  assert.ok(Math.max(...rates) <= 60, rates.join(' '));
});

test('a counter that went down counts as not moving; too few samples draw nothing', () => {
  const at = 1_700_000_000_000;
  const { points } = throughputOf([{ at, totals: totals(100) }, { at: at + 5_000, totals: totals(40) }, { at: at + 10_000, totals: totals(90) }], null);
  // 50 in 10 s (the drop to 40 is no negative rate): the samples are younger than a window,
  // so only the last point, over what there is.
  assert.deepEqual(points.map((p) => p.completed), [5]);
  assert.deepEqual(throughputOf([{ at, totals: totals(1) }], null).points, []);
});

test("the failure line's newest bucket divides by the part of it the read covers, not by the whole bucket", () => {
  const at = 1_700_000_000_000; // a bucket's start
  const samples = Array.from({ length: 62 }, (_, s) => ({ at: at + s * 1_000, totals: totals(0) }));
  const ended = {
    deadLettered: new Map([[at + 50_000, 10], [at + 60_000, 3]]),
    leasesLost: new Map([[at + 60_000, 2]]),
    at: at + 61_000, // one second into the newest bucket
  };
  const points = throughputOf(samples, ended).points.slice(-2);
  assert.deepEqual(points.map((p) => p.t), [at + 50_000, at + 60_000]);
  assert.deepEqual(points.map((p) => p.failed), [1, 3], '10 over a whole bucket, 3 over its first second');
  assert.deepEqual(points.map((p) => p.recovered), [0, 2]);
});
