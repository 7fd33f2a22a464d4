/**
 * Giving a connection back after an error (useConnection), against the real PostgreSQL: a
 * connection the server answered is rolled back and kept; one whose query timed out is
 * discarded, since node-postgres leaves the timed-out query active on it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { testDatabase } from '../../test/db';
import { createPool, useConnection } from './client';

const db = await testDatabase();

/** Runs `failing` inside a transaction through useConnection; the connection's pid and the error. */
async function failInTransaction(pool: pg.Pool, failing: string) {
  let pid = 0;
  const err = await useConnection(pool, async (client) => {
    pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    await client.query('BEGIN');
    await client.query(failing);
  }).catch((e: unknown) => e);
  return { pid, err };
}

test('an error the server answered: the transaction is rolled back and the connection kept', async (t) => {
  const pool = createPool(db.url, { name: 'release-test', max: 1 });
  t.after(() => pool.end());
  const { pid, err } = await failInTransaction(pool, 'SELECT 1 / 0');
  assert.ok(err instanceof pg.DatabaseError);
  assert.equal(pool.totalCount, 1);
  const again = await pool.connect();
  try {
    // (In the failed transaction still, any query would be refused.)
    const { rows } = await again.query('SELECT pg_backend_pid() AS pid');
    assert.equal(rows[0].pid, pid, 'the same connection');
  } finally {
    again.release();
  }
});

test('a query that timed out: the connection is discarded, not handed out again', async (t) => {
  const pool = createPool(db.url, { name: 'release-test', max: 1, queryTimeoutMs: 200 });
  t.after(() => pool.end());
  const { pid, err } = await failInTransaction(pool, 'SELECT pg_sleep(5)');
  assert.match(String(err), /timeout/i);
  assert.equal(pool.totalCount, 0, 'the timed-out connection was given back to the pool');
  const { rows } = await pool.query('SELECT pg_backend_pid() AS pid');
  assert.notEqual(rows[0].pid, pid);
});

test('a database whose default is synchronous_commit = off: our sessions commit durably anyway (acknowledged enqueues and claims survive a crash)', async (t) => {
  await db.pool.query(`ALTER DATABASE "${db.name}" SET synchronous_commit = off`);
  t.after(() => db.pool.query(`ALTER DATABASE "${db.name}" RESET synchronous_commit`));
  // Also where the server refuses the pool's other settings (they are given up; durability is not).
  const pools: { name: string; settings?: Record<string, string> }[] = [
    { name: 'plain' },
    { name: 'with-settings', settings: { jit: 'off' } },
    { name: 'refused', settings: { no_such_setting: 'on' } },
  ];
  for (const opts of pools) {
    const pool = createPool(db.url, { ...opts, max: 1 });
    try {
      const { rows } = await pool.query(`SELECT current_setting('synchronous_commit') AS s`);
      assert.equal(rows[0].s, 'on', opts.name);
    } finally {
      await pool.end();
    }
  }
});
