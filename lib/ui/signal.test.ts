/**
 * The overview's "due jobs with no wake-up id": only on queues live workers take from. Due
 * jobs of a paused queue, or of one no live worker consumes, wait by design (Recover would
 * not ring them): counting them told operators to run Recover for thousands it did not touch.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gapCount, queueSignal, signalGaps } from './signal';

const q = (due: number, signalBacklog: number | null, workersAlive: number, paused = false, dueUnhandled = 0) => ({
  due: Math.min(due, 10_000),
  dueCapped: due >= 10_000,
  dueUnhandled,
  signalBacklog,
  workersAlive,
  controls: paused ? ({ paused: true } as never) : null,
});

test('a served queue misses the due jobs beyond its ids in Redis; paused and unserved ones miss none', () => {
  assert.deepEqual(queueSignal(q(10, 4, 2)), { kind: 'served', missing: 6, unhandled: 0 });
  assert.deepEqual(queueSignal(q(10, 40, 2)), { kind: 'served', missing: 0, unhandled: 0 });
  assert.deepEqual(queueSignal(q(50_000, 0, 1)), { kind: 'served', missing: 10_000, unhandled: 0 }, 'judged within the due jobs counted');
  assert.deepEqual(queueSignal(q(10, null, 2)), { kind: 'served', missing: null, unhandled: 0 });
  assert.deepEqual(queueSignal(q(404, 0, 2, true)), { kind: 'paused', due: 404 });
  assert.deepEqual(queueSignal(q(1_100, 0, 0)), { kind: 'unserved', due: 1_100 });
  assert.deepEqual(signalGaps([q(10, 7, 2), q(404, 0, 2, true), q(1_100, 0, 0), q(5, 0, 0, true)]), { missing: 3, paused: 409, unserved: 1_100, unhandled: 0, atLeast: { missing: false, paused: false, unserved: false, unhandled: false } });
});

test('due jobs of a type no live worker handles wait for a handler, not a wake-up', () => {
  // 537 due, 534 of a type nobody handles, 3 rung: nothing is missing.
  assert.deepEqual(queueSignal(q(537, 3, 2, false, 534)), { kind: 'served', missing: 0, unhandled: 534 });
  assert.deepEqual(queueSignal(q(537, 0, 2, false, 534)), { kind: 'served', missing: 3, unhandled: 534 });
  assert.deepEqual(queueSignal(q(537, 0, 0, false, 0)), { kind: 'unserved', due: 537 });
  assert.deepEqual(signalGaps([q(537, 1, 2, false, 534), q(10, 10, 1)]), { missing: 2, paused: 0, unserved: 0, unhandled: 534, atLeast: { missing: false, paused: false, unserved: false, unhandled: false } });
});

test('a sum over a queue whose due jobs were counted only up to the cap is said as at least', () => {
  // 60,000 due on a paused queue are counted as 10,000: the overview said "10,000 wait on paused queues".
  const gaps = signalGaps([q(60_000, 0, 2, true), q(5, 0, 0), q(50_000, 0, 1)]);
  assert.deepEqual(gaps, { missing: 10_000, paused: 10_000, unserved: 5, unhandled: 0, atLeast: { missing: true, paused: true, unserved: false, unhandled: false } });
  assert.equal(gapCount(gaps.paused, gaps.atLeast.paused, String), '≥ 10000');
  assert.equal(gapCount(gaps.unserved, gaps.atLeast.unserved, String), '5');
  assert.deepEqual(signalGaps([q(60_000, 20_000, 2)]).atLeast, { missing: false, paused: false, unserved: false, unhandled: false }, 'nothing missing: no bound to say');
  assert.deepEqual(signalGaps([q(60_000, 0, 2, false, 10_000)]), { missing: 0, paused: 0, unserved: 0, unhandled: 10_000, atLeast: { missing: false, paused: false, unserved: false, unhandled: true } });
});
