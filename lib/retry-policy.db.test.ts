/**
 * A job type's retry policy, declared by its handlers module: its attempts (for jobs enqueued
 * without maxAttempts, by any producer) and its backoff; and a handler's own verdicts, thrown
 * with the package's error classes: a failure for good (PermanentError) or a retry at a delay
 * it names (RetryError), or a snooze that spends no attempt (SnoozeError). A real worker runs
 * test/handlers/retry-policy.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { cleanup } from '../test/cleanup';
import { testDatabase } from '../test/db';
import { REDIS_URL } from '../test/env';
import { root, startWorkers, uniquePrefix } from '../test/processes';
import { waitFor } from '../test/wait';
import { loadHandlers } from '../worker/handlers';
import { createClient } from './client';

const db = await testDatabase();
const prefix = uniquePrefix('retry');
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = prefix;
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());
const jobs = await import('../app/api/jobs/route');
const client = createClient({ databaseUrl: db.url, redisUrl: REDIS_URL, redisPrefix: prefix });
cleanup(() => client.close());

const post = async (body: unknown) => {
  const res = await jobs.POST(new Request('http://test/api/jobs', { method: 'POST', body: JSON.stringify(body) }));
  assert.equal(res.status, 202, JSON.stringify(await res.clone().json()));
  return (await res.json()) as { id?: string; jobs?: { id: string }[] };
};
/** A job's row, with its last ended attempt and the retry delay set by the failure that ended it (both times the database's). */
const row = async (id: string) =>
  (
    await db.pool.query(
      `SELECT j.status, j.attempt_count, j.max_attempts, j.error, a.outcome,
              round(extract(epoch FROM j.run_at - a.finished_at) * 1000) AS retry_in_ms
         FROM jobs j LEFT JOIN LATERAL (SELECT * FROM ended_attempts e WHERE e.job_id = j.job_id ORDER BY attempt DESC LIMIT 1) a ON true
        WHERE j.job_id = $1`,
      [id],
    )
  ).rows[0];
const settled = (id: string, status: string) =>
  waitFor(`job ${id} ${status}`, async () => {
    const r = await row(id);
    return r.status === status && r.outcome ? r : null;
  }, { timeoutMs: 30_000 });

test("a type's attempts and backoff, a handler's PermanentError, RetryError and SnoozeError", async () => {
  const workers = startWorkers({
    databaseUrl: db.url,
    redisUrl: REDIS_URL,
    prefix,
    processes: 1,
    concurrency: 4,
    extra: { LEASEHOLD_HANDLERS: path.join(root, 'test/handlers/retry-policy.ts') },
  });
  cleanup(() => workers.stop());
  await waitFor('the worker to register its types', async () => (await db.pool.query(`SELECT count(*)::int AS n FROM job_types`)).rows[0].n === 4, { timeoutMs: 30_000 });

  // Enqueued without maxAttempts, one at a time, in a batch and through the client: the type's 5.
  const one = (await post({ type: 'sync.flaky' })).id!;
  const batch = (await post([{ type: 'sync.flaky' }, { type: 'sync.flaky', maxAttempts: 2 }])).jobs!.map((j) => j.id);
  const viaClient = (await client.enqueue({ type: 'sync.flaky' })).id;
  const demo = (await post({ type: 'demo.noop' })).id!;
  const attempts = async (id: string) => (await row(id)).max_attempts;
  assert.deepEqual([await attempts(one), await attempts(batch[0]!), await attempts(batch[1]!), await attempts(viaClient)], [5, 5, 2, 5], "the type's, unless the producer gave its own");
  assert.equal(await attempts(demo), 3, 'a type that declares none: the default');
  const schedule = (await db.pool.query(`SELECT max_attempts FROM schedules WHERE name = 'flaky-nightly'`)).rows[0];
  assert.equal(schedule.max_attempts, 5, "a schedule of the type, defined without maxAttempts, takes the type's");

  // The type's backoff: an hour's base puts the first retry 30 to 60 minutes out (the default: 0.5-1 s).
  const flaky = await settled(one, 'retrying');
  assert.equal(flaky.outcome, 'retried');
  assert.ok(flaky.retry_in_ms >= 1_800_000 && flaky.retry_in_ms <= 3_600_000, `retry in ${flaky.retry_in_ms} ms`);

  // A RetryError names its own delay, over the backoff; the attempt counts.
  const limited = await settled((await post({ type: 'sync.limited' })).id!, 'retrying');
  assert.equal(Number(limited.retry_in_ms), 5_400_000);
  assert.equal(limited.attempt_count, 1);
  assert.equal(limited.error, '429 Too Many Requests');

  // A PermanentError fails the job at once, with four attempts left.
  const invalid = await settled((await post({ type: 'sync.invalid' })).id!, 'failed');
  assert.equal(invalid.attempt_count, 1);
  assert.equal(invalid.max_attempts, 5);
  assert.equal(invalid.outcome, 'failed');
  assert.equal(invalid.error, 'the account does not exist');

  // A SnoozeError puts the job off without spending its attempt: with one attempt, it still
  // runs a second time, and its history says snoozed, not failed.
  const later = (await post({ type: 'sync.export', maxAttempts: 1 })).id!;
  const done = await settled(later, 'completed');
  assert.deepEqual([done.attempt_count, done.max_attempts, done.error], [2, 2, null]);
  const history = (await db.pool.query(`SELECT outcome, error, error_stack FROM ended_attempts WHERE job_id = $1 ORDER BY attempt`, [later])).rows;
  assert.deepEqual(history.map((a) => [a.outcome, a.error, a.error_stack]), [['snoozed', 'the export is not ready yet', null], ['completed', null, null]]);
  const { rows: gap } = await db.pool.query(
    `SELECT round(extract(epoch FROM a.started_at - b.finished_at) * 1000) AS ms FROM ended_attempts a, ended_attempts b
      WHERE a.job_id = $1 AND b.job_id = $1 AND a.attempt = 2 AND b.attempt = 1`,
    [later],
  );
  assert.ok(Number(gap[0].ms) >= 300, `the second attempt started ${gap[0].ms} ms after the snooze: not before its 300 ms`);
  // Counted as a snooze, not a failure, in the worker's counters (written with its heartbeat).
  await waitFor('the snooze in the workers\' counters', async () => {
    const { rows } = await db.pool.query(`SELECT sum((metrics->>'snoozed')::int)::int AS snoozed, sum((metrics->>'retried')::int)::int AS retried FROM workers`);
    return rows[0].snoozed === 1 && rows[0];
  }, { timeoutMs: 30_000 });
});

test('a module declaring a retry policy that cannot be followed is refused at start, saying which and why', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-retry-'));
  cleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
  const cases: [string, RegExp][] = [
    [`{ maxAttempts: 0 }`, /jobTypes\["t"\]\.maxAttempts must be a whole number from 1 to 100/],
    [`{ maxAttempts: 101 }`, /maxAttempts must be a whole number from 1 to 100/],
    [`{ backoff: 1000 }`, /jobTypes\["t"\]\.backoff must be \{baseMs\?, maxMs\?\}/],
    [`{ backoff: { baseMs: 0.5 } }`, /backoff\.baseMs must be a whole number of milliseconds/],
    [`{ backoff: { maxMs: 3e9 } }`, /backoff\.maxMs must be a whole number of milliseconds from 1 to 2147483647/],
    [`{ backoff: { baseMs: 7200000 } }`, /backoff\.baseMs must not be above backoff\.maxMs \(3600000, the default\)/],
    [`{ backoff: { baseMs: 5000, maxMs: 1000 } }`, /backoff\.baseMs must not be above backoff\.maxMs \(1000\)/],
  ];
  for (const [i, [declaration, message]] of cases.entries()) {
    const file = path.join(dir, `m${i}.mjs`);
    fs.writeFileSync(file, `export const handlers = { t: () => 1 };\nexport const jobTypes = { t: ${declaration} };\n`);
    await assert.rejects(loadHandlers(file), message, declaration);
  }
  // A misspelt field left its default in place without a word; a zod 3 schema was read as JSON
  // Schema, and its internals registered as a schema that checks nothing (zod 4 ships zod 3's API as zod/v3).
  const refused: [string, RegExp][] = [
    [`export const jobTypes = { t: { maxAtempts: 10 } };`, /jobTypes\["t"\]: unknown field "maxAtempts" \(the fields are description, payload, timeoutMs, maxAttempts, backoff\)/],
    [`export const jobTypes = { t: { backoff: { base: 10 } } };`, /jobTypes\["t"\]\.backoff: unknown field "base"/],
    [`import { z } from '${import.meta.resolve('zod/v3')}';\nexport const jobTypes = { t: { payload: z.object({ n: z.number() }) } };`, /jobTypes\["t"\]\.payload: a zod 3 schema/],
    [`export const schedules = [{ name: 's', cron: '0 3 * * *', tz: 'Europe/Berlin', type: 't' }];`, /schedules\[0\]: unknown field "tz" \(the fields are name, cron, type, payload, queue, timezone,/],
    [`export const schedules = [{ name: 's', cron: 5, type: 't' }];`, /schedules\[0\]\.cron must be a string/],
    [`export const schedules = { s: { cron: '* * * * *' } };`, /`schedules` must be an array/],
  ];
  for (const [i, [exports, message]] of refused.entries()) {
    const file = path.join(dir, `r${i}.mjs`);
    fs.writeFileSync(file, `export const handlers = { t: () => 1 };\n${exports}\n`);
    await assert.rejects(loadHandlers(file), message, exports);
  }
  const fine = path.join(dir, 'fine.mjs');
  fs.writeFileSync(fine, `export const handlers = { t: () => 1 };\nexport const jobTypes = { t: { maxAttempts: 25, backoff: { baseMs: 2000 } } };\n`);
  const loaded = await loadHandlers(fine);
  assert.equal(loaded.registrations[0]!.maxAttempts, 25);
  assert.deepEqual(loaded.backoffs.get('t'), { baseMs: 2000, maxMs: undefined });
});
