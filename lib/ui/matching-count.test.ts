import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchingCount } from './matching-count';

const counts = (o: Partial<Record<string, number>>) => ({ queued: 0, running: 0, retrying: 0, completed: 0, failed: 0, cancelled: 0, ...o });
const kinds = (o: Partial<Record<string, string>> = {}) => ({ queued: 'exact', running: 'exact', retrying: 'exact', completed: 'exact', failed: 'exact', cancelled: 'exact', ...o });
const stats = {
  counts: counts({ queued: 12, failed: 1_200_000, completed: 40 }),
  kinds: kinds({ failed: 'estimate' }),
  queues: [
    { queue: 'emails', counts: counts({ failed: 25, queued: 1 }), kinds: kinds() },
    { queue: 'big', counts: counts({ completed: 50_000 }), kinds: kinds({ completed: 'atLeast', failed: 'unknown' }) },
  ],
} as never;

test("a status and a queue are counted from the overview's counts, exact or said as an estimate or a floor", () => {
  assert.equal(matchingCount(stats, { status: 'failed', queue: 'emails' }), '25 jobs match');
  assert.equal(matchingCount(stats, { queue: 'emails' }), '26 jobs match');
  assert.equal(matchingCount(stats, { status: 'queued' }), '12 jobs match');
  assert.equal(matchingCount(stats, { status: 'failed' }), '≈1.20M jobs match');
  assert.equal(matchingCount(stats, { status: 'completed', queue: 'big' }), '≥ 50,000 jobs match');
  assert.equal(matchingCount(stats, { status: 'queued', queue: 'emails' }), '1 job matches');
});

test('nothing said when the counts cannot say it', () => {
  assert.equal(matchingCount(stats, { status: 'failed', error: 'timeout' }), null, 'a search needs a count of its own');
  assert.equal(matchingCount(stats, { queue: 'not-listed' }), null);
  assert.equal(matchingCount(stats, { queue: 'big' }), null, 'a share the statistics do not know');
  assert.equal(matchingCount({ ...(stats as object), refreshFailing: true } as never, { queue: 'emails' }), null, 'a snapshot served on while the database is away');
});
