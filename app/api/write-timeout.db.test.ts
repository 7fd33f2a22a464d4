/**
 * A write the database cannot finish in time is cancelled by the server and answered 503,
 * with nothing written: the client's own timeout used to give up first and answer 500
 * while the INSERT, once the lock it waited for was released, committed anyway (a producer
 * retrying would have enqueued the job twice).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { uniquePrefix } from '../../test/processes';
import { waitFor } from '../../test/wait';
import { WRITE_STATEMENT_TIMEOUT_MS } from '@/lib/server/context';

const db = await testDatabase();
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = uniquePrefix('write-timeout');
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());
const jobs = await import('./jobs/route');

test('an enqueue held up past the write timeout is cancelled by the server: 503, nothing written, nothing written later', async () => {
  const blocker = new pg.Client({ connectionString: db.url });
  await blocker.connect();
  cleanup(() => blocker.end());
  await blocker.query('BEGIN');
  await blocker.query('LOCK TABLE jobs IN SHARE MODE'); // an INSERT waits for it
  const started = performance.now();
  const res = await jobs.POST(new Request('http://test/api/jobs', { method: 'POST', body: JSON.stringify({ type: 'demo.noop' }) }));
  const waitedMs = performance.now() - started;
  // The answer in every message: a failure on a busy machine (another run's connections
  // filling max_connections reads 'nothing was sent') must say which it was.
  const text = await res.text();
  const said = `${res.status} ${text} after ${Math.round(waitedMs)} ms`;
  const body = JSON.parse(text);
  assert.equal(res.status, 503, said);
  assert.equal(body.error.code, 'unavailable', said);
  assert.match(body.error.message, /rolled back/, said);
  assert.ok(waitedMs >= WRITE_STATEMENT_TIMEOUT_MS - 1_000, `the server's timeout answered (${Math.round(waitedMs)} ms)`);
  // The statement is gone from the server, not waiting behind the lock to commit later.
  await waitFor('no statement of the console left waiting', async () =>
    (await db.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'leasehold:web' AND state = 'active'`)).rows[0].n === 0,
  );
  await blocker.query('COMMIT');
  assert.equal((await db.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n, 0);
  // And the console writes again once the lock is gone.
  const after = await jobs.POST(new Request('http://test/api/jobs', { method: 'POST', body: JSON.stringify({ type: 'demo.noop' }) }));
  assert.equal(after.status, 202, `${after.status} ${await after.clone().text()}`);
});
