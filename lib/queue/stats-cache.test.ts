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
function steady(heartbeatOffsetMs: number, minutes = 5) {
  const t0 = 1_700_000_000_000;
  const samples: { at: number; totals: WorkerTotals }[] = [];
  let reported = 0;
  for (let at = t0; at <= t0 + minutes * 60_000; at += 1_000) {
    const beats = Math.floor((at - t0 - heartbeatOffsetMs) / 10_000);
    if (beats >= 0) reported = 50 * 10 * (beats + 1);
    samples.push({ at: at + ((at / 1000) % 3 === 0 ? 400 : 0), totals: totals(reported) });
  }
  return samples;
}

test('a steady rate reported at each heartbeat draws a steady line, wherever the heartbeats fall on the buckets', () => {
  for (const offset of [0, 300, 4_900, 9_600, 9_999]) {
    const { points, bucketMs } = throughputOf(steady(offset), null);
    assert.equal(bucketMs, BUCKET_MS);
    // Past the first half minute (the window's length), away from the first report.
    const settled = points.slice(4, -1).map((p) => p.completed);
    assert.ok(settled.length > 20);
    for (const rate of settled) assert.ok(rate >= 40 && rate <= 60, `offset ${offset}: ${settled.join(' ')}`);
  }
});

test('a minute the console did not sample is spread over that minute, not drawn as one spike', () => {
  const samples = steady(0).filter((s) => s.at < 1_700_000_060_000 || s.at >= 1_700_000_120_000);
  const rates = throughputOf(samples, null).points.slice(4, -1).map((p) => p.completed);
  assert.ok(Math.max(...rates) <= 60, rates.join(' '));
});

test('a counter that went down counts as not moving; too few samples draw nothing', () => {
  const at = 1_700_000_000_000;
  const { points } = throughputOf([{ at, totals: totals(100) }, { at: at + 5_000, totals: totals(40) }, { at: at + 10_000, totals: totals(90) }], null);
  // 50 in 10 s (the drop to 40 is no negative rate), in the bucket and in the next one, just begun.
  assert.deepEqual(points.map((p) => p.completed), [5, 5]);
  assert.deepEqual(throughputOf([{ at, totals: totals(1) }], null).points, []);
});
