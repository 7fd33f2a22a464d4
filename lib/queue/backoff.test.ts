import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffMs } from './backoff';

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
