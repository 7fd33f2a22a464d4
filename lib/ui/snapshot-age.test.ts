/** When a page asks for the stats again: at its interval, or within a second after an old snapshot. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OLD_SNAPSHOT_REASK_MS, statsRefetchMs } from './snapshot-age';

const answer = (servedAgeMs: number, refreshMs = 2_000) => {
  const computedAt = '2026-12-06T22:00:00.000Z';
  return { computedAt, dbNow: new Date(Date.parse(computedAt) + servedAgeMs).toISOString(), refreshMs };
};

test('a snapshot served fresh: asked again at the page\'s interval', () => {
  assert.equal(statsRefetchMs(15_000, answer(1_200)), 15_000);
  assert.equal(statsRefetchMs(15_000, answer(5_900)), 15_000, 'under three intervals');
  assert.equal(statsRefetchMs(15_000, undefined), 15_000, 'nothing read yet');
});

test('an old snapshot (the first viewer after a quiet spell): asked again within a second, not a whole poll later', () => {
  assert.equal(statsRefetchMs(15_000, answer(107_000)), OLD_SNAPSHOT_REASK_MS);
  assert.equal(statsRefetchMs(15_000, answer(6_000)), OLD_SNAPSHOT_REASK_MS, 'three intervals');
  assert.equal(statsRefetchMs(15_000, answer(30_000, 20_000)), 15_000, 'a slow database refreshes every 20 s: 30 s is not old for it');
  assert.equal(statsRefetchMs(500, answer(107_000)), 500, 'never slower than the page asks');
  assert.equal(statsRefetchMs(false, answer(107_000)), false, 'refresh paused: not asked at all');
});
