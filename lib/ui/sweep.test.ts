/** The overview's "the recover sweep has stopped": only while workers are alive, past the bound, the snapshot's age counted. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sweepOf, sweepStoppedFor } from './sweep';

const s = (workersAlive: number, sweptAgoMs: number | null) => ({ workersAlive, sweptAgoMs, sweepStaleAfterMs: 60_000 });

test('a sweep older than the bound while workers are alive has stopped; the age counts the snapshot', () => {
  assert.equal(sweepStoppedFor(s(2, 5_000), 0), null, 'ran 5 s ago: fine');
  assert.equal(sweepStoppedFor(s(2, 60_000), 0), null, 'at the bound: not yet');
  assert.equal(sweepStoppedFor(s(2, 90_000), 0), 90_000);
  assert.equal(sweepStoppedFor(s(2, 50_000), 20_000), 70_000, 'a 20 s old snapshot of a 50 s old sweep');
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
