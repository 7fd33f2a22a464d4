/**
 * "Enqueued since T" stops reading ids where no job can match (read.ts createdFloor), and
 * created_at is not in id order: a job enqueued in a transaction the producer held open has
 * the transaction's start as created_at and an id drawn at its insert, after jobs enqueued
 * meanwhile. A job enqueued before T with a larger id than one enqueued after it must not
 * end the search above the later one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../../test/db';
import { waitFor } from '../../test/wait';
import { resolveFilter } from './bulk';
import * as ops from './ops';
import { listJobs } from './read';

const db = await testDatabase();
const queue = 'held-open';

/** Until the database clock is a millisecond (the API's precision for a moment) past `t`. */
const clockPast = (t: Date) =>
  waitFor('the database clock a millisecond on', async () => (await db.pool.query(`SELECT now() >= $1::timestamptz + interval '1 ms' AS past`, [t])).rows[0].past);

test('a job enqueued since T is listed below one with a larger id enqueued in a transaction begun before T', async () => {
  // A job run to completion first: it finished before T, so it and every smaller id were enqueued before.
  const [done] = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop' }]);
  const claimed = await ops.jobClaim(db.pool, { ids: [done!.id], workerId: 'w', leaseMs: 30_000 });
  assert.equal((await ops.jobComplete(db.pool, { workerId: 'w', items: claimed.map((j) => ({ jobId: j.id, attempt: j.attemptCount })) })).size, 1);
  await clockPast((await db.pool.query(`SELECT finished_at FROM jobs WHERE job_id = $1`, [done!.id])).rows[0].finished_at);

  const held = await db.pool.connect();
  try {
    await held.query('BEGIN');
    const begun = (await held.query('SELECT now() AS t')).rows[0].t as Date;
    await clockPast(begun);
    const [later] = await ops.jobEnqueue(db.pool, [{ queue, type: 'demo.noop' }]);
    const [inHeld] = await ops.jobEnqueue(held, [{ queue, type: 'demo.noop' }]);
    await held.query('COMMIT');
    assert.ok(BigInt(inHeld!.id) > BigInt(later!.id), 'the held transaction drew the larger id');

    const { rows } = await db.pool.query(
      `SELECT to_char(date_trunc('milliseconds', created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS since FROM jobs WHERE job_id = $1`,
      [later!.id],
    );
    const since = rows[0].since as string;
    const page = await listJobs(db.pool, { createdSince: since, limit: 50 });
    assert.deepEqual(page.jobs.map((j) => j.id), [later!.id], `created since ${since}`);
    assert.deepEqual(
      (await listJobs(db.pool, { queue, createdSince: since, limit: 50 })).jobs.map((j) => j.id),
      [later!.id],
      'with a filter no index serves',
    );
    // An action over the same window takes the same job.
    assert.deepEqual((await resolveFilter(db.pool, { queue, createdSince: since })).ids, [later!.id]);
  } finally {
    held.release();
  }
});
