import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attemptInBudget, backoffMs } from './backoff';

test('grows exponentially with half the delay jittered', () => {
  assert.equal(backoffMs(1, { random: () => 0 }), 500);
  assert.equal(backoffMs(1, { random: () => 0.999999 }), 1000);
  assert.equal(backoffMs(3, { random: () => 0 }), 2000);
  assert.equal(backoffMs(4, { random: () => 0.5 }), 6000);
});

test('is capped, however many attempts', () => {
  assert.equal(backoffMs(100, { maxMs: 60_000, random: () => 0.999999 }), 60_000);
  assert.ok(backoffMs(1e9) <= 3_600_000);
});

test('spreads a burst of failures over the window', () => {
  const delays = new Set(Array.from({ length: 200 }, () => backoffMs(5)));
  assert.ok(delays.size > 100);
});

test('counts the tries of the current budget, not the lifetime attempt number', () => {
  assert.equal(attemptInBudget({ attemptCount: 1, maxAttempts: 3, attemptBudget: 3 }), 1);
  assert.equal(attemptInBudget({ attemptCount: 3, maxAttempts: 3, attemptBudget: 3 }), 3);
  // Two attempts handed back at shutdown (max_attempts + 1 each): the next try is still the first.
  assert.equal(attemptInBudget({ attemptCount: 3, maxAttempts: 5, attemptBudget: 3 }), 1);
  // Requeued with a fresh budget after 12 attempts (max = 12 + 3): the 13th is the first of it.
  assert.equal(attemptInBudget({ attemptCount: 13, maxAttempts: 15, attemptBudget: 3 }), 1);
  // Requeued without one (one more attempt, max 3 + 1): the 4th counts as the budget's 3rd.
  assert.equal(attemptInBudget({ attemptCount: 4, maxAttempts: 4, attemptBudget: 3 }), 3);
});
