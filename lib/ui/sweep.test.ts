/** The overview's "the recover sweep has stopped": only while workers are alive, past the bound, the snapshot's age counted. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sweepStoppedFor } from './sweep';

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
