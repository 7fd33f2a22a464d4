/**
 * The overview's "due jobs with no wake-up id": only on queues live workers take from by
 * their rings. Due jobs of a paused queue, of one no live worker consumes, of a limited one
 * (claimed by polling, its list ignored), of a type no live worker handles, and suspects
 * waiting their turn, wait by design (Recover would not move them): counting them told
 * operators to run Recover for thousands it did not touch.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gapCount, oldestWaiting, queueSignal, signalGaps } from './signal';

const q = (due: number, signalBacklog: number | null, workersAlive: number, paused = false, dueUnhandled = 0, o: { dueSuspect?: number; limited?: boolean } = {}) => ({
  due: Math.min(due, 10_000),
  dueCapped: due >= 10_000,
  dueUnhandled,
  dueSuspect: o.dueSuspect ?? 0,
  signalBacklog,
  workersAlive,
  controls: paused ? ({ paused: true } as never) : o.limited ? ({ paused: false, concurrencyLimit: 2 } as never) : null,
});
const none = { missing: false, paused: false, unserved: false, limited: false, unhandled: false, suspect: false };
const gaps0 = { missing: 0, paused: 0, unserved: 0, limited: 0, unhandled: 0, suspect: 0, stale: 0 };

test('a served queue misses the due jobs beyond its ids in Redis; paused and unserved ones miss none', () => {
  assert.deepEqual(queueSignal(q(10, 4, 2)), { kind: 'served', missing: 6, unhandled: 0, suspect: 0 });
  assert.deepEqual(queueSignal(q(10, 40, 2)), { kind: 'served', missing: 0, unhandled: 0, suspect: 0 });
  assert.equal(signalGaps([q(10, 40, 2)]).stale, 30);
  assert.deepEqual(queueSignal(q(50_000, 0, 1)), { kind: 'served', missing: 10_000, unhandled: 0, suspect: 0 }, 'judged within the due jobs counted');
  assert.deepEqual(queueSignal(q(10, null, 2)), { kind: 'served', missing: null, unhandled: 0, suspect: 0 });
  assert.deepEqual(queueSignal(q(404, 0, 2, true)), { kind: 'paused', due: 404 });
  assert.deepEqual(queueSignal(q(1_100, 0, 0)), { kind: 'unserved', due: 1_100 });
  assert.deepEqual(signalGaps([q(10, 7, 2), q(404, 0, 2, true), q(1_100, 0, 0), q(5, 0, 0, true)]), { ...gaps0, missing: 3, paused: 409, unserved: 1_100, atLeast: none });
  // 30 ids left by a bulk cancel, none due: stale rings, not a backlog (a worker drops each as it pops it).
  assert.deepEqual(signalGaps([q(0, 30, 2), q(10, 12, 1)]), { ...gaps0, stale: 32, atLeast: none });
  assert.equal(signalGaps([q(4, 215, 0)]).stale, 211, 'on a queue no worker consumes too');
});

test('a limited queue (claimed by polling, its Redis list ignored) misses no wake-up, however many are due', () => {
  // 60 due on a queue limited to 2 running: the overview said "56 due jobs have no wake-up id … run Recover now".
  assert.deepEqual(queueSignal(q(60, 4, 1, false, 0, { limited: true })), { kind: 'limited', due: 60 });
  assert.deepEqual(queueSignal(q(60, 4, 0, false, 0, { limited: true })), { kind: 'unserved', due: 60 }, 'no worker: said as such');
  assert.deepEqual(signalGaps([q(60, 4, 1, false, 0, { limited: true }), q(3, 3, 1)]), { ...gaps0, limited: 60, atLeast: none });
});

test('suspects (a likely poison, one per worker at a time) wait their turn, not a wake-up', () => {
  // 6 due after two crashes, all suspects, none rung: the overview said "6 without a wake-up", and Recover changed nothing.
  assert.deepEqual(queueSignal(q(6, 0, 2, false, 0, { dueSuspect: 6 })), { kind: 'served', missing: 0, unhandled: 0, suspect: 6 });
  assert.deepEqual(queueSignal(q(10, 0, 2, false, 0, { dueSuspect: 6 })), { kind: 'served', missing: 4, unhandled: 0, suspect: 6 });
  assert.deepEqual(signalGaps([q(6, 0, 2, false, 0, { dueSuspect: 6 })]), { ...gaps0, suspect: 6, atLeast: none });
});

test('due jobs of a type no live worker handles wait for a handler, not a wake-up', () => {
  // 537 due, 534 of a type nobody handles, 3 rung: nothing is missing.
  assert.deepEqual(queueSignal(q(537, 3, 2, false, 534)), { kind: 'served', missing: 0, unhandled: 534, suspect: 0 });
  assert.deepEqual(queueSignal(q(537, 0, 2, false, 534)), { kind: 'served', missing: 3, unhandled: 534, suspect: 0 });
  assert.deepEqual(queueSignal(q(537, 0, 0, false, 0)), { kind: 'unserved', due: 537 });
  assert.deepEqual(signalGaps([q(537, 1, 2, false, 534), q(10, 10, 1)]), { ...gaps0, missing: 2, unhandled: 534, atLeast: none });
});

test('a sum over a queue whose due jobs were counted only up to the cap is said as at least', () => {
  // 60,000 due on a paused queue are counted as 10,000: the overview said "10,000 wait on paused queues".
  const gaps = signalGaps([q(60_000, 0, 2, true), q(5, 0, 0), q(50_000, 0, 1)]);
  assert.deepEqual(gaps, { ...gaps0, missing: 10_000, paused: 10_000, unserved: 5, atLeast: { ...none, missing: true, paused: true } });
  assert.equal(gapCount(gaps.paused, gaps.atLeast.paused, String), '≥ 10000');
  assert.equal(gapCount(gaps.unserved, gaps.atLeast.unserved, String), '5');
  assert.deepEqual(signalGaps([q(60_000, 20_000, 2)]).atLeast, none, 'nothing missing: no bound to say');
  assert.equal(signalGaps([q(60_000, 20_000, 2)]).stale, 0, 'due jobs counted only up to the cap: no id is known to be stale');
  assert.deepEqual(signalGaps([q(60_000, 0, 2, false, 10_000)]), { ...gaps0, unhandled: 10_000, atLeast: { ...none, unhandled: true } });
  assert.deepEqual(signalGaps([q(60_000, 0, 2, false, 0, { limited: true })]), { ...gaps0, limited: 10_000, atLeast: { ...none, limited: true } });
});

test("the oldest due job waiting is a queue's that workers should be taking, named; paused and unserved queues are said apart", () => {
  const w = (queue: string, ageMs: number | null, base: ReturnType<typeof q>) => ({ ...base, queue, oldestDueAgeMs: ageMs });
  const queues = [w('billing', 89_000, q(30, 0, 0)), w('archive', 600_000, q(5, 0, 2, true)), w('emails', 12_000, q(60, 0, 1, false, 0, { limited: true })), w('default', 3_000, q(2, 2, 2)), w('idle', null, q(0, 0, 2))];
  assert.deepEqual(oldestWaiting(queues), { taken: { queue: 'emails', ageMs: 12_000 }, held: { queue: 'archive', ageMs: 600_000, why: 'paused' } });
  assert.deepEqual(oldestWaiting([queues[0]!]), { taken: null, held: { queue: 'billing', ageMs: 89_000, why: 'no worker' } });
  // Every due job a suspect, or of a type no live worker handles: waiting by design too.
  const suspects = w('poison', 300_000, q(3, 0, 2, false, 1, { dueSuspect: 2 }));
  assert.deepEqual(oldestWaiting([suspects, queues[3]!]), { taken: { queue: 'default', ageMs: 3_000 }, held: { queue: 'poison', ageMs: 300_000, why: 'no handler or suspects' } });
  assert.deepEqual(oldestWaiting([]), { taken: null, held: null });
});
