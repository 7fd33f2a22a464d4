/**
 * retriedOnLostRace: the policy for statements that lose races that roll them back whole (a
 * deadlock's victim, a singleton key taken meanwhile). The races themselves are real in
 * singleton-key.db.test.ts ("deadlocked", "a key taken by a producer"); what cannot be made
 * to happen by hand — losing every try — is here.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QueueError } from '../errors';
import { isDeadlock, LOST_RACE_TRIES, retriedOnLostRace } from './internal';

// What isPool tells apart: a pool (each statement its own transaction) and one connection.
const pool = { connect: () => {}, totalCount: 0, query: () => {} } as never;
const connection = { query: () => {} } as never;
const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });

const failing = (errors: Error[], value = 'done') => {
  let calls = 0;
  const statement = async () => {
    const err = errors[calls++];
    if (err) throw err;
    return value;
  };
  return { statement, calls: () => calls };
};

test('a statement that lost a race is tried again on a pool, and its answer returned', async () => {
  const s = failing([deadlock, deadlock]);
  assert.equal(await retriedOnLostRace(pool, isDeadlock, s.statement), 'done');
  assert.equal(s.calls(), 3);
});

test('one that loses every try ends in a 503 that says so, after LOST_RACE_TRIES tries', async () => {
  const s = failing(Array(LOST_RACE_TRIES + 5).fill(deadlock));
  await assert.rejects(retriedOnLostRace(pool, isDeadlock, s.statement), (err: unknown) => {
    assert.ok(err instanceof QueueError);
    assert.equal(err.code, 'unavailable');
    assert.match(err.message, /lost a race with other writers 5 times in a row \(40P01\) and changed nothing: try again/);
    return true;
  });
  assert.equal(s.calls(), LOST_RACE_TRIES);
});

test("inside a caller's connection (perhaps its transaction) the loss is the caller's: not tried again", async () => {
  const s = failing([deadlock]);
  await assert.rejects(retriedOnLostRace(connection, isDeadlock, s.statement), (err) => err === deadlock);
  assert.equal(s.calls(), 1);
});

test('an error that is not a lost race is thrown at once', async () => {
  const other = Object.assign(new Error('duplicate key'), { code: '23505', constraint: 'jobs_pkey' });
  const s = failing([other]);
  await assert.rejects(retriedOnLostRace(pool, isDeadlock, s.statement), (err) => err === other);
  assert.equal(s.calls(), 1);
});
