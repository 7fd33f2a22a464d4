/** agedBy: a shared read answer, served later, moves its database clock and every lease on. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agedBy, type ListedJob } from './read';

test('an answer 400 ms old: the clock 400 ms later, running leases 400 ms shorter, others untouched', () => {
  const running = { leaseRemainingMs: 5_000 } as ListedJob;
  const done = { leaseRemainingMs: null } as ListedJob;
  const r = { jobs: [running, done], dbNow: new Date('2026-01-01T00:00:00.000Z') };
  const aged = agedBy(r, 400);
  assert.equal(aged.dbNow.toISOString(), '2026-01-01T00:00:00.400Z');
  assert.deepEqual(aged.jobs.map((j) => j.leaseRemainingMs), [4_600, null]);
  assert.equal(r.jobs[0]!.leaseRemainingMs, 5_000, 'the cached answer itself is not changed');
  assert.equal(agedBy(r, 0), r);
});
