import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { knownQueueError, QueueError, handlerVerdict, PermanentError, RetryError, RETRY_AFTER_MAX_MS, SnoozeError } from './errors';

const dbError = (code: string) => Object.assign(new pg.DatabaseError('x', 1, 'error'), { code });

test('a database busy or away is 503, saying whether anything may have been changed', () => {
  const unchanged = [
    dbError('57014'), // statement timeout: the server rolled it back
    dbError('53300'),
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    new Error('timeout exceeded when trying to connect'), // no free connection in the pool
    new AggregateError([Object.assign(new Error('a'), { code: 'ECONNREFUSED' }), Object.assign(new Error('b'), { code: 'ECONNREFUSED' })]),
  ];
  for (const err of unchanged) {
    const q = knownQueueError(err)!;
    assert.equal(q.code, 'unavailable', String(err));
    assert.equal(q.httpStatus, 503);
    assert.match(q.message, /rolled back|nothing was sent/);
  }
  for (const err of [new Error('Query read timeout'), new Error('Connection terminated unexpectedly'), Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })]) {
    const q = knownQueueError(err)!;
    assert.equal(q.code, 'unavailable', String(err));
    assert.match(q.message, /may or may not have been done/);
    // A request that only reads (a GET, a preview) changed nothing whatever the answer was.
    const read = knownQueueError(err, { readOnly: true })!;
    assert.equal(read.code, 'unavailable');
    assert.equal(read.message, 'the database stopped answering; this request only reads, so nothing was changed: try again');
  }
  // Not migrated: said, with what to run.
  assert.equal(knownQueueError(dbError('42P01'))!.message, 'the database has no Leasehold tables (it is not migrated): run `npx leasehold migrate`');
});

test('a QueueError stands for itself; a bug is no known error', () => {
  const q = new QueueError('not_found', 'no such job');
  assert.equal(knownQueueError(q), q);
  assert.equal(knownQueueError(new TypeError('x is undefined')), null);
  assert.equal(knownQueueError(dbError('23505')), null);
  assert.equal(knownQueueError(null), null);
});

test("a handler's verdict: PermanentError fails for good, RetryError names its delay (clamped), SnoozeError too without spending the attempt, anything else backs off", () => {
  const v = (permanent: boolean, afterMs: number | null, snooze = false) => ({ permanent, afterMs, snooze });
  assert.deepEqual(handlerVerdict(new PermanentError('bad input')), v(true, null));
  assert.deepEqual(handlerVerdict(new RetryError('429', { afterMs: 30_000.4 })), v(false, 30_000));
  assert.deepEqual(handlerVerdict(new RetryError('later', { afterMs: Infinity })), v(false, RETRY_AFTER_MAX_MS));
  assert.deepEqual(handlerVerdict(new RetryError('now', { afterMs: 0 })), v(false, 0));
  assert.deepEqual(handlerVerdict(new SnoozeError('not ready', { afterMs: 60_000 })), v(false, 60_000, true));
  assert.deepEqual(handlerVerdict(new SnoozeError('much later', { afterMs: Infinity })), v(false, RETRY_AFTER_MAX_MS, true));
  for (const other of [new Error('boom'), 'a string', null, undefined, { name: 'PermanentError' }, { name: 'SnoozeError', afterMs: 5 }]) {
    assert.deepEqual(handlerVerdict(other), v(false, null), String(other));
  }
  // The mark, not the class: a copy of these classes loaded apart (the package's entry) counts too.
  const mark = Symbol.for('leasehold.handlerError');
  assert.deepEqual(handlerVerdict({ [mark]: 'permanent' }), v(true, null));
  assert.deepEqual(handlerVerdict({ [mark]: 'retry', afterMs: 5 }), v(false, 5));
  assert.deepEqual(handlerVerdict({ [mark]: 'snooze', afterMs: 5 }), v(false, 5, true));
  assert.deepEqual(handlerVerdict({ [mark]: 'retry', afterMs: '5' }), v(false, null), 'not a number: the backoff decides');
  assert.deepEqual(handlerVerdict({ [mark]: 'snooze', afterMs: '5' }), v(false, null), 'not a number: a failure, not a snooze that never wakes');
  // A delay that did not parse (a missing Retry-After) is the handler's mistake, said where it is made.
  for (const bad of [null, undefined, '', Number.NaN, -1]) {
    assert.throws(() => new RetryError('x', { afterMs: bad as number }), /afterMs must be a number of milliseconds, 0 or more/, String(bad));
    assert.throws(() => new SnoozeError('x', { afterMs: bad as number }), /SnoozeError: afterMs must be a number of milliseconds, 0 or more/, String(bad));
  }
  assert.throws(() => new (RetryError as unknown as new (m: string) => RetryError)('x'), TypeError);
});
