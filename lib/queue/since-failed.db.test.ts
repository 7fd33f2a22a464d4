/**
 * The failed list with a time filter ("failed in the last hour"): it is ordered by when jobs
 * failed, so once its windows reach failures older than the filter's moment no further row
 * can match — the read must stop there, not read 50 windows of old failures per page and
 * hand back a cursor to pages that are empty.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../../test/db';
import { listJobs } from './read';

const db = await testDatabase();

await db.pool.query(`
  INSERT INTO jobs (queue, type, status, payload, attempt_count, started_at, finished_at, error)
  SELECT 'q', 'demo.noop', 'failed', '{}', 3, now() - interval '2 days', now() - interval '2 days' - i * interval '1 second', 'old boom'
    FROM generate_series(1, 60000) i;
  INSERT INTO jobs (queue, type, status, payload, attempt_count, started_at, finished_at, error)
  SELECT 'q', 'demo.noop', 'failed', '{}', 3, now(), now() - i * interval '1 second', 'new boom' FROM generate_series(1, 3) i;
  ANALYZE jobs;`);

/** Every statement the list sends, counted. */
function counting() {
  let n = 0;
  const query = db.pool.query.bind(db.pool);
  const counted = { query: (...a: Parameters<typeof query>) => (n++, query(...a)) } as unknown as typeof db.pool;
  return { db: counted, count: () => n };
}

test('failed in the last hour: the three recent failures, no cursor, and no read past the hour', async () => {
  const c = counting();
  const page = await listJobs(c.db, { status: 'failed', finishedSince: '1h', limit: 50 });
  assert.equal(page.jobs.length, 3);
  assert.equal(page.nextCursor, null, 'no page after this one can hold a failure in the last hour');
  assert.ok(c.count() <= 6, `${c.count()} statements: windows of failures older than the hour were read`);
});

test('failed jobs enqueued in the last hour: the windows stop at failures older than the hour too', async () => {
  await db.pool.query(`
    INSERT INTO jobs (queue, type, status, payload, attempt_count, started_at, finished_at, error)
    SELECT 'enqueued-lately', 'demo.noop', 'failed', '{}', 3, now(), now(), 'lately' FROM generate_series(1, 3) i`);
  const c = counting();
  const page = await listJobs(c.db, { status: 'failed', queue: 'enqueued-lately', createdSince: '1h', limit: 50 });
  assert.equal(page.jobs.length, 3);
  assert.equal(page.nextCursor, null, 'a job enqueued in the last hour failed in it: none below this page');
  assert.ok(c.count() <= 6, `${c.count()} statements: windows of failures older than the hour were read`);
});

test('failed since a moment, with another condition: the same', async () => {
  const since = new Date(Date.now() - 3_600_000).toISOString();
  const page = await listJobs(db.pool, { status: 'failed', finishedSince: since, error: 'boom', limit: 50 });
  assert.equal(page.jobs.length, 3);
  assert.equal(page.nextCursor, null);
});
