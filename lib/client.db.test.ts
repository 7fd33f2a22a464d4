/**
 * The producer client against the real PostgreSQL and Redis: enqueue, enqueueMany, get,
 * and transactional enqueue inside the caller's own transaction (the ring only after
 * COMMIT; a rollback leaves no row and rings nothing), plus the README's producer
 * example, run from plain Node as another service would (`import ... from 'leasehold'`).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { cleanup } from '../test/cleanup';
import { emptyDatabase, testDatabase } from '../test/db';
import { REDIS_URL } from '../test/env';
import { root, uniquePrefix } from '../test/processes';
import { insertJob } from '../test/factories';
import { waitFor } from '../test/wait';
import { createClient, LeaseholdError } from './client';
import { createLogger } from './log';
import { jobClaim, jobComplete } from './queue/ops';
import { RedisDoorbell } from './queue/signal';
import { FsResultStore } from './results';

const db = await testDatabase();
const prefix = uniquePrefix('client');
const redis = new Redis(REDIS_URL);
cleanup(() => redis.disconnect());

const leasehold = createClient({ databaseUrl: db.url, redisUrl: REDIS_URL, redisPrefix: prefix });
cleanup(() => leasehold.close());

await db.pool.query('CREATE TABLE orders (id serial PRIMARY KEY, total numeric NOT NULL)');

const rung = (queue: string) => redis.lrange(`${prefix}:queue:${queue}`, 0, -1);
const jobCount = async (queue: string) =>
  (await db.pool.query('SELECT count(*)::int AS n FROM jobs WHERE queue = $1', [queue])).rows[0].n as number;

describe('enqueue, enqueueMany, get', () => {
  test('enqueue commits the row, then rings the queue', async () => {
    const r = await leasehold.enqueue({ type: 'demo.sleep', payload: { ms: 5 }, queue: 'c-one', maxAttempts: 2 });
    assert.equal(r.created, true);
    assert.deepEqual(await rung('c-one'), [r.id]);
    const got = await leasehold.get(r.id);
    assert.equal(got!.job.status, 'queued');
    assert.equal(got!.job.maxAttempts, 2);
    assert.deepEqual(got!.attempts, []);
    assert.equal(await leasehold.get('987654321'), null);
    assert.equal(await leasehold.get('not-an-id'), null);
  });

  test('validation is the API\'s: a LeaseholdError naming the field, nothing written', async () => {
    await assert.rejects(leasehold.enqueue({ type: 'no.such', queue: 'c-bad' }), (e: LeaseholdError) => e instanceof LeaseholdError && e.code === 'unknown_type');
    await assert.rejects(
      leasehold.enqueue({ type: 'demo.sleep', payload: { ms: 'soon' }, queue: 'c-bad' }),
      (e: LeaseholdError) => e.code === 'invalid_request' && /payload\.ms/.test(e.message),
    );
    await assert.rejects(leasehold.enqueue({ type: 'demo.noop', maxAttempts: 0, queue: 'c-bad' }), /maxAttempts/);
    assert.equal(await jobCount('c-bad'), 0);
  });

  test('an invalid Date or a payload JSON cannot carry: a LeaseholdError naming the field, not a bare RangeError/TypeError', async () => {
    const refused = (field: RegExp) => (e: Error) => e instanceof LeaseholdError && e.code === 'invalid_request' && field.test(e.message);
    await assert.rejects(leasehold.enqueue({ type: 'demo.noop', queue: 'c-bad-js', runAt: new Date('x') }), refused(/^runAt: /));
    await assert.rejects(leasehold.enqueue({ type: 'demo.noop', queue: 'c-bad-js', payload: { n: 1n } }), refused(/^payload: .*BigInt/));
    await assert.rejects(leasehold.enqueue({ type: 'demo.noop', queue: 'c-bad-js', payload: 1n }), refused(/^payload: /));
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    await assert.rejects(leasehold.enqueue({ type: 'demo.noop', queue: 'c-bad-js', payload: cycle }), refused(/^payload: .*JSON/));
    // Nested too deep for JSON.stringify's stack: named for its depth, as the API names it.
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    await assert.rejects(leasehold.enqueue({ type: 'demo.noop', queue: 'c-bad-js', payload: deep }), refused(/^payload: nested deeper than 64 levels$/));
    await assert.rejects(
      leasehold.enqueueMany([{ type: 'demo.noop', queue: 'c-bad-js' }, { type: 'demo.noop', queue: 'c-bad-js', runAt: new Date(NaN) }]),
      refused(/^\[1\]\.runAt: /),
    );
    // Not an array (plain JavaScript): named, not a TypeError; an empty one enqueues nothing.
    await assert.rejects(leasehold.enqueueMany({ type: 'demo.noop' } as never), refused(/^enqueueMany: give an array of jobs \(an object was given\)$/));
    assert.deepEqual(await leasehold.enqueueMany([]), []);
    assert.equal(await jobCount('c-bad-js'), 0);
  });

  test("a database that is not migrated, or not there: a LeaseholdError 'unavailable' that says so, the driver's error as its cause", async () => {
    const empty = createClient({ databaseUrl: await emptyDatabase('client'), redisUrl: null });
    cleanup(() => empty.close());
    for (const call of [() => empty.enqueue({ type: 'demo.noop' }), () => empty.enqueueMany([{ type: 'demo.noop' }]), () => empty.get('1')]) {
      await assert.rejects(call(), (e: LeaseholdError) =>
        e instanceof LeaseholdError && e.name === 'LeaseholdError' && e.code === 'unavailable' &&
        e.message === 'the database has no Leasehold tables (it is not migrated): run `npx leasehold migrate`' &&
        (e.cause as { code?: string }).code === '42P01');
    }
    // A port nothing listens on (one this process held a moment ago).
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const away = createClient({ databaseUrl: `postgres://postgres@127.0.0.1:${port}/none`, redisUrl: null });
    cleanup(() => away.close());
    await assert.rejects(away.get('1'), (e: LeaseholdError) =>
      e instanceof LeaseholdError && e.code === 'unavailable' && /unreachable.*nothing was sent to it/.test(e.message) &&
      (e.cause as { code?: string }).code === 'ECONNREFUSED');
  });

  test('get(id) is null for an id beyond a bigint, as for any id with no job', async () => {
    assert.equal(await leasehold.get('9223372036854775807'), null);
    assert.equal(await leasehold.get('9223372036854775808'), null);
    assert.equal(await leasehold.get('9999999999999999999'), null);
  });

  test('runAt as a Date; a job due later is not rung; an idempotency key returns the first job', async () => {
    const later = await leasehold.enqueue({ type: 'demo.noop', queue: 'c-later', runAt: new Date(Date.now() + 3_600_000) });
    assert.deepEqual(await rung('c-later'), []);
    const again = await leasehold.enqueue({ type: 'demo.noop', queue: 'c-later', idempotencyKey: 'c-key' });
    const same = await leasehold.enqueue({ type: 'demo.noop', queue: 'c-later', idempotencyKey: 'c-key' });
    assert.equal(same.id, again.id);
    assert.equal(same.created, false);
    assert.notEqual(later.id, again.id);
  });

  test('enqueueMany: 2500 jobs in one transaction; one bad job writes none of them', async () => {
    const jobs = Array.from({ length: 2500 }, (_, i) => ({ type: 'demo.noop', payload: { i }, queue: 'c-many' }));
    await assert.rejects(leasehold.enqueueMany([...jobs.slice(0, 2000), { type: 'demo.noop', queue: 'c-many', maxAttempts: -1 }]), /\[2000\]\.maxAttempts/);
    assert.equal(await jobCount('c-many'), 0);
    const results = await leasehold.enqueueMany(jobs);
    assert.equal(results.length, 2500);
    assert.equal(new Set(results.map((r) => r.id)).size, 2500);
    assert.equal(await jobCount('c-many'), 2500);
    assert.equal((await rung('c-many')).length, 2500, 'every due job rung after the commit');
  });

  test('enqueueMany calls sharing idempotency keys in opposite orders never deadlock: one job per key', async () => {
    // 200 keys: one statement each; 2,500: three statements in one transaction each, whose
    // key locks are held to COMMIT (cut in input order, 4 rounds in 4 deadlocked).
    for (const [round, size] of [0, 1, 2, 3, 4, 5, 6, 7].map((r) => [r, r < 4 ? 200 : 2_500] as const)) {
      // Keys whose byte order differs from a collation's: upper case, digits, accents, an emoji.
      const jobs = Array.from({ length: size }, (_, k) => ({ type: 'demo.noop', queue: 'c-keys', idempotencyKey: `r${round}-${['a', 'B', 'é', '😀', '1'][k % 5]}${k}` }));
      const [a, b] = await Promise.all([leasehold.enqueueMany(jobs), leasehold.enqueueMany([...jobs].reverse())]);
      assert.deepEqual(a.map((r) => r.id), [...b].reverse().map((r) => r.id), 'both calls name the same job for each key');
      assert.equal(a.filter((r) => r.created).length + b.filter((r) => r.created).length, size, 'each key created once');
    }
    assert.equal(await jobCount('c-keys'), 4 * 200 + 4 * 2_500);
  });

  test('a ring of 150,000 ids reaches Redis whole and in order, at the back and at the front', async () => {
    const bell = new RedisDoorbell(REDIS_URL, prefix, db.pool, createLogger());
    try {
      const ids = Array.from({ length: 150_000 }, (_, k) => String(k + 1));
      await bell.ring(ids.map((jobId) => ({ jobId, queue: 'c-big' })));
      const front = Array.from({ length: 25_000 }, (_, k) => String(200_001 + k));
      await bell.ring(front.map((jobId) => ({ jobId, queue: 'c-big' })), { front: true });
      assert.deepEqual(await rung('c-big'), [...front, ...ids]);
    } finally {
      await bell.close();
    }
  });
});

describe('waitFor', () => {
  test('resolves with the job once a worker has completed it; not before', async () => {
    const { id } = await leasehold.enqueue({ type: 'demo.sleep', payload: { ms: 5 }, queue: 'c-wait' });
    let settled = false;
    const waiting = leasehold.waitFor(id, { timeoutMs: 60_000 }).finally(() => (settled = true));
    // Claimed and running, as a worker does it (the same statements): still waiting.
    assert.equal((await jobClaim(db.pool, { workerId: 'h:1:wait', leaseMs: 30_000, ids: [id] })).length, 1);
    await waitFor('the job running', async () => (await leasehold.get(id))!.job.status === 'running');
    assert.equal(settled, false);
    assert.equal((await jobComplete(db.pool, { workerId: 'h:1:wait', items: [{ jobId: id, attempt: 1 }] })).size, 1);
    const done = await waiting;
    assert.equal(done.job.status, 'completed');
    assert.equal(done.attempts.length, 1);
    // A finished job: at once.
    assert.equal((await leasehold.waitFor(id)).job.status, 'completed');
  });

  test('no such job: not_found; a timeout or an abort: the signal\'s reason, the job left as it is', async () => {
    const missing = await leasehold.waitFor('987654321').catch((e: unknown) => e);
    assert.ok(missing instanceof LeaseholdError);
    assert.equal(missing.code, 'not_found');
    const { id } = await leasehold.enqueue({ type: 'demo.sleep', payload: { ms: 5 }, queue: 'c-wait-never' });
    const timedOut = await leasehold.waitFor(id, { timeoutMs: 300 }).catch((e: unknown) => e);
    assert.equal((timedOut as Error).name, 'TimeoutError');
    const ac = new AbortController();
    const aborted = leasehold.waitFor(id, { signal: ac.signal }).catch((e: unknown) => e);
    ac.abort(new Error('the caller gave up'));
    assert.equal(((await aborted) as Error).message, 'the caller gave up');
    assert.equal((await leasehold.get(id))!.job.status, 'queued');
  });
});

describe('cancel', () => {
  const statusOf = async (id: string) => (await db.pool.query('SELECT status, cancel_requested_at IS NOT NULL AS asked FROM jobs WHERE job_id = $1', [id])).rows[0];
  const auditRows = async () => (await db.pool.query(`SELECT actor, actor_kind, action, job_ids, reason, changed, skipped, state FROM audit_log WHERE actor_kind = 'client' ORDER BY audit_id`)).rows;

  test('as the console cancels: queued at once, running asked to stop, finished left alone with why; audited as the client', async () => {
    const { id: queued } = await leasehold.enqueue({ type: 'demo.sleep', payload: { ms: 5 }, queue: 'c-cancel' });
    const running = await insertJob(db.pool, { status: 'running', queue: 'c-cancel', workerId: 'h:1:client-test' });
    const done = await insertJob(db.pool, { status: 'completed', queue: 'c-cancel' });
    const before = (await auditRows()).length;
    const r = await leasehold.cancel([queued, running, done, '987654321', queued], { reason: 'order 42 was refunded' });
    assert.deepEqual(
      r.items.map((i) => [i.id, i.ok, i.outcome]),
      [
        [queued, true, 'cancelled'],
        [running, true, 'cancel_requested'],
        [done, false, 'skipped'],
        ['987654321', false, 'not_found'],
      ],
    );
    assert.match(r.items[2]!.reason!, /completed/);
    assert.deepEqual([r.changed, r.skipped], [2, 2]);
    assert.equal((await statusOf(queued)).status, 'cancelled');
    assert.deepEqual(await statusOf(running), { status: 'running', asked: true });
    assert.deepEqual(await statusOf(done), { status: 'completed', asked: false });
    const entries = (await auditRows()).slice(before);
    assert.equal(entries.length, 1);
    assert.equal(entries[0].actor, `${os.userInfo().username}@${os.hostname()}`);
    assert.deepEqual([entries[0].action, entries[0].reason, entries[0].changed, entries[0].skipped, entries[0].state], ['bulk.cancel', 'order 42 was refunded', 2, 2, 'done']);
    // One id, as a string.
    const { id: one } = await leasehold.enqueue({ type: 'demo.sleep', payload: { ms: 5 }, queue: 'c-cancel' });
    assert.deepEqual((await leasehold.cancel(one)).items.map((i) => i.outcome), ['cancelled']);
  });

  test('ids or a reason it cannot take: a LeaseholdError naming them, and nothing written', async () => {
    const { id } = await leasehold.enqueue({ type: 'demo.sleep', payload: { ms: 5 }, queue: 'c-cancel-bad' });
    const before = (await auditRows()).length;
    for (const [ids, opts, why] of [
      [[id, 'not-an-id'], {}, /"not-an-id" is not a job id/],
      [[], {}, /give 1 to 1000 job ids \(0 given\)/],
      [Array.from({ length: 1001 }, () => id), {}, /\(1001 given\)/],
      [[id, '99999999999999999999'], {}, /is not a job id/],
      [[id], { reason: 'x'.repeat(501) }, /reason/],
      [42, {}, /give a job id or an array of them/],
      [[id, 42], {}, /cancel: a number is not a job id/],
    ] as const) {
      const err = await leasehold.cancel(ids as never, opts).catch((e: unknown) => e);
      assert.ok(err instanceof LeaseholdError, String(err));
      assert.equal(err.code, 'invalid_request');
      assert.match(err.message, why);
    }
    assert.equal((await statusOf(id)).status, 'queued');
    assert.equal((await auditRows()).length, before);
  });
});

describe('requeue and reschedule', () => {
  const row = async (id: string) =>
    (await db.pool.query('SELECT status, attempt_count, max_attempts, result_key, lease_expires_at, priority, run_at > now() + interval \'50 minutes\' AS later FROM jobs WHERE job_id = $1', [id])).rows[0];
  const lastClientEntry = async () =>
    (await db.pool.query(`SELECT action, reason, changed, skipped, details, actor_kind FROM audit_log WHERE actor_kind = 'client' ORDER BY audit_id DESC LIMIT 1`)).rows[0];

  test('requeue as the console does: a finished job due again and rung, its result deleted; a running one left unless its lease is revoked', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-client-results-'));
    cleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
    const store = new FsResultStore(dir);
    const withStore = createClient({ databaseUrl: db.url, redisUrl: REDIS_URL, redisPrefix: prefix, results: store });
    cleanup(() => withStore.close());
    const failed = await insertJob(db.pool, { status: 'failed', queue: 'c-requeue', attemptCount: 3, maxAttempts: 3 });
    const done = await insertJob(db.pool, { status: 'completed', queue: 'c-requeue' });
    const key = await store.put(done, 1, Buffer.from('{"ok":true}'));
    await db.pool.query('UPDATE jobs SET result_key = $2 WHERE job_id = $1', [done, key]);
    const running = await insertJob(db.pool, { status: 'running', queue: 'c-requeue', workerId: 'h:1:client-test' });

    const r = await withStore.requeue([failed, done, running], { resetAttempts: true, reason: 'the upstream is back' });
    assert.deepEqual(
      r.items.map((i) => [i.id, i.outcome]),
      [
        [failed, 'requeued'],
        [done, 'requeued'],
        [running, 'skipped'],
      ],
    );
    assert.match(r.items[2]!.reason!, /lease/);
    assert.equal((await row(failed)).status, 'queued');
    assert.deepEqual([(await row(failed)).attempt_count, (await row(failed)).max_attempts], [3, 6], 'resetAttempts: three attempts more');
    assert.equal((await row(done)).result_key, null);
    assert.equal(await store.get(key), null, "the completed job's last result is deleted");
    assert.deepEqual((await rung('c-requeue')).sort(), [failed, done].sort());
    assert.equal((await row(running)).status, 'running');
    const entry = await lastClientEntry();
    assert.deepEqual([entry.action, entry.reason, entry.changed, entry.skipped], ['bulk.requeue', 'the upstream is back', 2, 1]);
    assert.equal(entry.details.resetAttempts, true);

    const revoked = await leasehold.requeue(running, { revokeLease: true });
    assert.deepEqual(revoked.items.map((i) => i.outcome), ['revoked']);
    assert.notEqual((await row(running)).status, 'running');
    assert.equal((await row(running)).lease_expires_at, null, "the fence: its worker's writes no longer match");
  });

  test('reschedule moves a waiting job (a Date or ISO text, a priority) and leaves a running one with why', async () => {
    const { id } = await leasehold.enqueue({ type: 'demo.sleep', payload: { ms: 5 }, queue: 'c-resched' });
    const running = await insertJob(db.pool, { status: 'running', queue: 'c-resched', workerId: 'h:1:client-test' });
    const r = await leasehold.reschedule([id, running], { runAt: new Date(Date.now() + 3_600_000), priority: 7, reason: 'after the migration' });
    assert.deepEqual(r.items.map((i) => [i.id, i.outcome]), [
      [id, 'rescheduled'],
      [running, 'skipped'],
    ]);
    assert.match(r.items[1]!.reason!, /run/);
    assert.deepEqual([(await row(id)).priority, (await row(id)).later], [7, true]);
    const entry = await lastClientEntry();
    assert.deepEqual([entry.action, entry.reason, entry.details.priority], ['reschedule', 'after the migration', 7]);
    // Due again now (a time already past), given as text; the audit entry keeps the time as
    // stored (now), not as asked, as the API's does.
    await leasehold.reschedule(id, { runAt: '2020-01-01T00:00:00Z' });
    assert.equal((await row(id)).later, false);
    const stored = (await db.pool.query(`SELECT run_at FROM jobs WHERE job_id = $1`, [id])).rows[0].run_at as Date;
    assert.equal((await lastClientEntry()).details.runAt, stored.toISOString());
  });

  test('input they cannot take: a LeaseholdError naming it, and nothing written', async () => {
    const { id } = await leasehold.enqueue({ type: 'demo.sleep', payload: { ms: 5 }, queue: 'c-resched-bad' });
    const before = (await db.pool.query(`SELECT count(*)::int AS n FROM audit_log`)).rows[0].n;
    const refusals: [Promise<unknown>, RegExp][] = [
      [leasehold.requeue([id, 'x']), /^requeue: "x" is not a job id/],
      [leasehold.requeue({} as never), /^requeue: give a job id or an array/],
      [leasehold.requeue(id, { reason: 'x'.repeat(501) }), /^requeue: reason/],
      [leasehold.reschedule(id, {}), /^reschedule: give runAt, priority or both/],
      [leasehold.reschedule(id, { priority: 12 }), /^reschedule: priority/],
      [leasehold.reschedule(id, { runAt: 'tomorrow' }), /^reschedule: runAt: must be an ISO 8601/],
      [leasehold.reschedule(id, { runAt: new Date('x') }), /^reschedule: runAt: an invalid Date/],
      [leasehold.reschedule([], { priority: 1 }), /^reschedule: give 1 to 1000 job ids/],
    ];
    for (const [p, why] of refusals) {
      const err = await p.catch((e: unknown) => e);
      assert.ok(err instanceof LeaseholdError, String(err));
      assert.equal(err.code, 'invalid_request');
      assert.match(err.message, why);
    }
    const r = await row(id);
    assert.deepEqual([r.status, r.priority, r.later], ['queued', 0, false]);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM audit_log`)).rows[0].n, before);
  });
});

describe('transactional enqueue', () => {
  test('transaction(client): the row is invisible and nothing is rung until COMMIT; afterCommit rings', async () => {
    const conn = await db.pool.connect();
    try {
      await conn.query('BEGIN');
      const tx = leasehold.transaction(conn);
      await conn.query('INSERT INTO orders (total) VALUES (10)');
      const r = await tx.enqueue({ type: 'demo.noop', queue: 'c-tx' });
      assert.equal(await jobCount('c-tx'), 0, 'not visible outside the transaction yet');
      assert.deepEqual(await rung('c-tx'), [], 'not rung before the commit');
      await conn.query('COMMIT');
      assert.equal(await jobCount('c-tx'), 1);
      assert.deepEqual(await rung('c-tx'), [], 'rung only by afterCommit');
      await tx.afterCommit();
      assert.deepEqual(await rung('c-tx'), [r.id]);
      await tx.afterCommit();
      assert.deepEqual(await rung('c-tx'), [r.id], 'afterCommit rings once');
    } finally {
      conn.release();
    }
  });

  test('transaction(client) rolled back: no row, nothing rung', async () => {
    const conn = await db.pool.connect();
    try {
      await conn.query('BEGIN');
      const tx = leasehold.transaction(conn);
      await tx.enqueueMany([{ type: 'demo.noop', queue: 'c-rb' }, { type: 'demo.noop', queue: 'c-rb' }]);
      await conn.query('ROLLBACK');
    } finally {
      conn.release();
    }
    assert.equal(await jobCount('c-rb'), 0);
    assert.deepEqual(await rung('c-rb'), []);
  });

  test('withTransaction(pool, fn) commits the caller\'s rows and the job together, then rings', async () => {
    const callerPool = new pg.Pool({ connectionString: db.url, max: 2 });
    cleanup(() => callerPool.end());
    const { order, job } = await leasehold.withTransaction(callerPool, async (tx) => {
      const { rows } = await tx.client.query('INSERT INTO orders (total) VALUES (42) RETURNING id');
      assert.deepEqual(await rung('c-wt'), []);
      return { order: rows[0].id as number, job: await tx.enqueue({ type: 'demo.noop', queue: 'c-wt', payload: { order: rows[0].id } }) };
    });
    assert.deepEqual(await rung('c-wt'), [job.id]);
    assert.deepEqual((await leasehold.get(job.id))!.job.payload, { order });
  });

  test('withTransaction(fn) that throws: rolled back, the caller\'s rows too, nothing rung, the error passes through', async () => {
    const before = (await db.pool.query('SELECT count(*)::int AS n FROM orders')).rows[0].n;
    await assert.rejects(
      leasehold.withTransaction(async (tx) => {
        await tx.client.query('INSERT INTO orders (total) VALUES (7)');
        await tx.enqueue({ type: 'demo.noop', queue: 'c-wt-rb' });
        throw new Error('payment declined');
      }),
      /payment declined/,
    );
    assert.equal((await db.pool.query('SELECT count(*)::int AS n FROM orders')).rows[0].n, before);
    assert.equal(await jobCount('c-wt-rb'), 0);
    assert.deepEqual(await rung('c-wt-rb'), []);
  });

  test('withTransaction(fn) whose statement failed but fn went on: the COMMIT rolled back, so it rejects, and nothing is rung', async () => {
    let id = '';
    await assert.rejects(
      leasehold.withTransaction(async (tx) => {
        id = (await tx.enqueue({ type: 'demo.noop', queue: 'c-wt-caught' })).id;
        await tx.client.query('SELECT 1/0').catch(() => {}); // caught: the transaction is aborted all the same
      }),
      (err: Error & { code?: string }) => err.code === 'state_forbids' && /rolled back, not committed/.test(err.message),
    );
    assert.equal(await leasehold.get(id), null);
    assert.equal(await jobCount('c-wt-caught'), 0);
    assert.deepEqual(await rung('c-wt-caught'), []);
  });

  test('a Redis URL that cannot be used is refused by createClient, before anything can be written', async () => {
    // Before, it failed at the first ring: after the COMMIT of transaction(client), whose
    // afterCommit() then threw, and a caller rolling back and retrying enqueued twice.
    for (const redisUrl of ['redis://127.0.0.1:notaport', 'not a url', 'http://127.0.0.1:6379']) {
      assert.throws(
        () => createClient({ databaseUrl: db.url, redisUrl, redisPrefix: prefix }),
        (e: unknown) => e instanceof LeaseholdError && e.code === 'invalid_request' && /redisUrl is not a Redis URL/.test(e.message),
        redisUrl,
      );
    }
    assert.doesNotThrow(() => createClient({ databaseUrl: db.url, redisUrl: 'off' }).close());
  });

  test('a transaction on a pool it holds whole still enqueues: the job types are not read through another connection', async () => {
    // One connection, held by the transaction: a read of the registered types through the
    // pool waited for it for ever (a plain pg.Pool waits without limit).
    const one = new pg.Pool({ connectionString: db.url, max: 1 });
    const c = createClient({ pool: one, redisUrl: 'off' });
    try {
      const r = await c.withTransaction(async (tx) => [await tx.enqueue({ type: 'demo.noop', queue: 'c-one-conn' }), await tx.enqueueMany([{ type: 'demo.noop', queue: 'c-one-conn' }])]);
      assert.equal(r.flat().length, 2);
      await assert.rejects(
        c.withTransaction((tx) => tx.enqueue({ type: 'not.registered', queue: 'c-one-conn' })),
        (e: unknown) => e instanceof LeaseholdError && e.code === 'unknown_type',
        'a type not built in is looked up through the transaction itself',
      );
      assert.equal(await jobCount('c-one-conn'), 2);
    } finally {
      await c.close();
      await one.end();
    }
  });

  test('without Redis the ring is a PostgreSQL NOTIFY, sent after the commit', async () => {
    const noRedis = createClient({ databaseUrl: db.url, redisUrl: null });
    cleanup(() => noRedis.close());
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    cleanup(() => listener.end());
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
    await listener.query('LISTEN leasehold_wakeup');
    await noRedis.withTransaction(async (tx) => {
      await tx.enqueue({ type: 'demo.noop', queue: 'c-notify' });
    });
    await waitFor('the NOTIFY', () => heard.some((p) => p.includes('c-notify')), { timeoutMs: 5_000 });
  });
});

describe('the README producer example', () => {
  test('runs from plain Node in another project that imports leasehold', async () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const m = readme.match(/<!-- producer example[^>]*-->\s*```js\n([\s\S]*?)```/);
    assert.ok(m, 'README.md has the producer example block');
    const consumer = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-consumer-'));
    cleanup(() => fs.rmSync(consumer, { recursive: true, force: true }));
    fs.mkdirSync(path.join(consumer, 'node_modules'));
    // Another service: leasehold installed as a dependency, and its own pg.
    fs.symlinkSync(root, path.join(consumer, 'node_modules/leasehold'));
    fs.symlinkSync(path.join(root, 'node_modules/pg'), path.join(consumer, 'node_modules/pg'));
    fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'producer', type: 'module', private: true }));
    fs.writeFileSync(path.join(consumer, 'producer.mjs'), m[1]!);
    const example = createClient({ databaseUrl: db.url }); // to read back what the example wrote
    cleanup(() => example.close());

    const exPrefix = uniquePrefix('readme');
    const r = spawnSync(process.execPath, ['producer.mjs'], {
      cwd: consumer,
      env: { PATH: process.env.PATH, DATABASE_URL: db.url, REDIS_URL, LEASEHOLD_REDIS_PREFIX: exPrefix, LEASEHOLD_LOG: 'warn', NODE_ENV: 'production' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, `the example failed:\n${r.stderr}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    const job = await example.get(out.id);
    assert.equal(job!.job.status, 'queued');
    assert.equal(out.enqueued, 3);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE payload->>'order' = $1`, [String(out.order)]);
    assert.equal(rows[0].n, 2, 'the job enqueued with the order, and the one enqueued in the hand-run transaction');
    const ids = await redis.lrange(`${exPrefix}:queue:default`, 0, -1);
    assert.ok(ids.includes(out.id), 'the example rang the workers');
    await redis.del(`${exPrefix}:queue:default`);
  });
});
