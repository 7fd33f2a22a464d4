/** A worker's report added into the archive's running total: counters, histograms and job types summed; gauges left out. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addReport } from './worker-totals';

test('counters and histograms add up, job types by queue and type, what describes the process now is left out', () => {
  const total = {};
  addReport(total, {
    claimed: 5,
    completed: 4,
    inFlight: 3,
    running: 2,
    rssBytes: 9e7,
    quiet: true,
    runTimeMs: { counts: [1, 2, 0], sum: 40, count: 3 },
    byType: [{ queue: 'q', type: 'a', completed: 4, retried: 0, failed: 0, cancelled: 0, runTimeMs: { counts: [1, 2, 0], sum: 40, count: 3 } }],
  });
  addReport(total, {
    claimed: 2,
    completed: 1,
    failed: 1,
    runTimeMs: { counts: [0, 1, 1, 1], sum: 900, count: 3 },
    byType: [
      { queue: 'q', type: 'a', completed: 1, retried: 0, failed: 1, cancelled: 0, runTimeMs: { counts: [0, 1, 1, 1], sum: 900, count: 3 } },
      { queue: 'r', type: 'a', completed: 0, retried: 2, failed: 0, cancelled: 0, runTimeMs: { counts: [2], sum: 2, count: 2 } },
      'not an entry',
      { queue: 'no type' },
    ],
  });
  addReport(total, 'not a report');
  assert.deepEqual(total, {
    claimed: 7,
    completed: 5,
    failed: 1,
    runTimeMs: { counts: [1, 3, 1, 1], sum: 940, count: 6 },
    byType: [
      { queue: 'q', type: 'a', completed: 5, retried: 0, failed: 1, cancelled: 0, runTimeMs: { counts: [1, 3, 1, 1], sum: 940, count: 6 } },
      { queue: 'r', type: 'a', completed: 0, retried: 2, failed: 0, cancelled: 0, runTimeMs: { counts: [2], sum: 2, count: 2 } },
    ],
  });
});
