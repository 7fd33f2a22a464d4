/** The overview's "the recover sweep has stopped": only while workers are alive, past the bound when the snapshot was read; the time told counts its age. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { claimTakesOver, expiredLeaseMover, sweepOf, sweepStoppedFor } from './sweep';

const s = (workersAlive: number, sweptAgoMs: number | null) => ({ workersAlive, sweptAgoMs, sweepStaleAfterMs: 60_000 });

test('a sweep older than the bound while workers are alive has stopped; judged on the snapshot, its age added to the time told only', () => {
  assert.equal(sweepStoppedFor(s(2, 5_000), 0), null, 'ran 5 s ago: fine');
  assert.equal(sweepStoppedFor(s(2, 60_000), 0), null, 'at the bound: not yet');
  assert.equal(sweepStoppedFor(s(2, 90_000), 0), 90_000);
  assert.equal(sweepStoppedFor(s(2, 1_400), 107_000), null, 'a snapshot served 107 s after it was read (the first view after a quiet spell), of a sweep that had run 1.4 s before: the snapshot is old, not the sweep');
  assert.equal(sweepStoppedFor(s(2, 50_000), 20_000), null, 'not past the bound when it was read: the next snapshot tells');
  assert.equal(sweepStoppedFor(s(2, 61_000), 20_000), 81_000, 'past the bound when read: the time told counts the snapshot\'s age');
  assert.equal(sweepStoppedFor(s(2, 65_000), -10_000), 65_000, 'a browser clock a little behind does not make it younger');
});

test('no worker alive, or a sweep that never ran: not judged', () => {
  assert.equal(sweepStoppedFor(s(0, 600_000), 0), null);
  assert.equal(sweepStoppedFor(s(3, null), 0), null);
});

test('who moves an expired lease on: the sweep, nobody with no worker alive, or nobody since it stopped', () => {
  assert.deepEqual(sweepOf(s(2, 5_000), 0), { state: 'sweeping' });
  assert.deepEqual(sweepOf(s(2, null), 0), { state: 'sweeping' }, 'never recorded: not judged');
  assert.deepEqual(sweepOf(s(0, 5_000), 0), { state: 'no-workers' });
  assert.deepEqual(sweepOf(s(0, 600_000), 0), { state: 'no-workers' }, 'no worker alive says so, whatever the record');
  assert.deepEqual(sweepOf(s(1, 600_000), 3_000), { state: 'stopped', agoMs: 603_000 });
});

test("with the sweep stopped, a job's page says a claim takes an expired lease over where one does, and nothing moves it on elsewhere", () => {
  const served = { withHandler: 1, queueControlled: false };
  const job = { attemptCount: 1, maxAttempts: 3, cancelRequestedAt: null };
  assert.equal(claimTakesOver(job, served), true);
  assert.equal(claimTakesOver(job, { ...served, queueControlled: true }), false, 'a paused or limited queue: jobClaimExpired leaves it to the sweep');
  assert.equal(claimTakesOver(job, { ...served, withHandler: 0 }), false, 'no live worker with the handler');
  assert.equal(claimTakesOver({ ...job, attemptCount: 3 }, served), false, 'no attempts left: the sweep fails it');
  assert.equal(claimTakesOver({ ...job, cancelRequestedAt: '2026-12-01T10:00:00.000Z' }, served), false, 'a cancel asked: the sweep cancels it');
  const fmt = (ms: number) => `${ms / 60_000} min`;
  const stopped = { state: 'stopped', agoMs: 12 * 60_000 } as const;
  assert.doesNotMatch(expiredLeaseMover(stopped, true, fmt), /nothing moves/);
  assert.match(expiredLeaseMover(stopped, true, fmt), /not run for 12 min .*a live worker of this queue takes the lease over when it has a free slot/);
  assert.match(expiredLeaseMover(stopped, false, fmt), /not run for 12 min .*nothing moves the job on until it runs again/);
  assert.match(expiredLeaseMover({ state: 'no-workers' }, true, fmt), /No worker is alive/);
  assert.match(expiredLeaseMover({ state: 'sweeping' }, true, fmt), /moves the job to retrying/);
});
