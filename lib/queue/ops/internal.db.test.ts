/**
 * retriedOnLostRace: the policy for statements that lose races that roll them back whole (a
 * deadlock's victim, a singleton key taken meanwhile). The races themselves are made in
 * singleton-key.db.test.ts ("deadlocked", "a key taken by a producer"); what cannot be made to
 * happen by hand — losing every try — is here, with the loss raised by PostgreSQL itself (the
 * same SQLSTATE a deadlock's victim gets) on a real pool and a real connection.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { testDatabase } from '../../../test/db';
import { QueueError } from '../errors';
import { isDeadlock, LOST_RACE_TRIES, retriedOnLostRace } from './internal';

const db = await testDatabase();

/** A statement that PostgreSQL fails as a deadlock's victim `losses` times, then answers. */
const losing = (executor: pg.Pool | pg.Client, losses: number) => {
  let calls = 0;
  const statement = async () => {
    calls++;
    if (calls <= losses) await executor.query(`DO $$ BEGIN RAISE EXCEPTION 'deadlock detected (raised by the test)' USING ERRCODE = '40P01'; END $$`);
    return (await executor.query(`SELECT 'done' AS answer`)).rows[0].answer as string;
  };
  return { statement, calls: () => calls };
};

test('a statement that lost a race is tried again on a pool, and its answer returned', async () => {
  const s = losing(db.pool, 2);
  assert.equal(await retriedOnLostRace(db.pool, isDeadlock, s.statement), 'done');
  assert.equal(s.calls(), 3);
});

test('one that loses every try ends in a 503 that says so, after LOST_RACE_TRIES tries', async () => {
  const s = losing(db.pool, LOST_RACE_TRIES + 5);
  await assert.rejects(retriedOnLostRace(db.pool, isDeadlock, s.statement), (err: unknown) => {
    assert.ok(err instanceof QueueError);
    assert.equal(err.code, 'unavailable');
    assert.match(err.message, /lost a race with other writers 5 times in a row \(40P01\) and changed nothing: try again/);
    return true;
  });
  assert.equal(s.calls(), LOST_RACE_TRIES);
});

test("inside a caller's transaction the loss is the caller's: not tried again, its own error kept", async () => {
  const connection = new pg.Client({ connectionString: db.url });
  await connection.connect();
  await connection.query('BEGIN');
  try {
    const s = losing(connection, 1);
    await assert.rejects(retriedOnLostRace(connection, isDeadlock, s.statement), (err: { code?: string }) => err.code === '40P01');
    assert.equal(s.calls(), 1);
    // A try there would only have failed again, on the aborted transaction, hiding the cause.
    await assert.rejects(connection.query('SELECT 1'), (err: { code?: string }) => err.code === '25P02');
  } finally {
    await connection.query('ROLLBACK');
    await connection.end();
  }
});

test('an error that is not a lost race is thrown at once', async () => {
  let calls = 0;
  const statement = async () => {
    calls++;
    return db.pool.query(`DO $$ BEGIN RAISE EXCEPTION 'duplicate key (raised by the test)' USING ERRCODE = '23505'; END $$`);
  };
  await assert.rejects(retriedOnLostRace(db.pool, isDeadlock, statement), (err: { code?: string }) => err.code === '23505');
  assert.equal(calls, 1);
});
