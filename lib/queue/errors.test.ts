import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { knownQueueError, QueueError } from './errors';

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
  }
});

test('a QueueError stands for itself; a bug is no known error', () => {
  const q = new QueueError('not_found', 'no such job');
  assert.equal(knownQueueError(q), q);
  assert.equal(knownQueueError(new TypeError('x is undefined')), null);
  assert.equal(knownQueueError(dbError('23505')), null);
  assert.equal(knownQueueError(null), null);
});
