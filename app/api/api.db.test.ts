/**
 * The HTTP API's route handlers, called with real Requests against the real PostgreSQL
 * and Redis: enqueue (one, many, idempotent), bad input (a clear 4xx, nothing written,
 * never a 500), listing, detail and the CAS actions.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { insertJob, jobRow } from '../../test/factories';
import { uniquePrefix } from '../../test/processes';
import { waitFor } from '../../test/wait';

const db = await testDatabase();
const prefix = uniquePrefix('api');
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = prefix;

cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const jobs = await import('./jobs/route');
const one = await import('./jobs/[id]/route');
const requeue = await import('./jobs/[id]/requeue/route');
const cancel = await import('./jobs/[id]/cancel/route');
const copy = await import('./jobs/[id]/copy/route');
const reschedule = await import('./jobs/[id]/reschedule/route');
const recover = await import('./recover/route');
const stats = await import('./stats/route');
const newer = await import('./jobs/newer/route');
const actions = await import('./actions/[action]/route');
const { readCache } = await import('@/lib/server/read-cache');

const post = (body: string | object, headers: Record<string, string> = {}) =>
  jobs.POST(
    new Request('http://test/api/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );
const params = (id: string) => ({ params: Promise.resolve({ id }) });
const action = (fn: typeof requeue.POST, id: string, body?: object) =>
  fn(new Request(`http://test/api/jobs/${id}/x`, { method: 'POST', body: body ? JSON.stringify(body) : undefined }), params(id));
const count = async () => (await db.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n as number;

describe('POST /api/jobs', () => {
  test("a due waiting job's detail says how many due jobs of its queue claims take before it; a scheduled or finished one's does not", async () => {
    const queue = uniquePrefix('api-ahead');
    const detail = async (id: string) => (await one.GET(new Request(`http://test/api/jobs/${id}`), params(id))).json();
    const first = await insertJob(db.pool, { queue, priority: 2, runInMs: -5_000 });
    await insertJob(db.pool, { queue, priority: 0 }); // ahead of every job of priority 2, however old
    await insertJob(db.pool, { queue, priority: 1, status: 'retrying', runInMs: -1_000 }); // a retry come due counts too
    await insertJob(db.pool, { queue, priority: 0, runInMs: 60_000 }); // not due: not ahead
    await insertJob(db.pool, { queue, priority: 1, status: 'running' }); // claimed: not ahead
    await insertJob(db.pool, { queue: `${queue}-other`, priority: 0 }); // another queue's
    const mine = await insertJob(db.pool, { queue, priority: 2 });
    const after = await insertJob(db.pool, { queue, priority: 2 }); // came due after it
    await insertJob(db.pool, { queue, priority: 3, runInMs: -60_000 }); // a lower priority, however old
    assert.deepEqual((await detail(mine)).ahead, { higher: 2, sameLevel: 1, capped: false });
    assert.deepEqual((await detail(first)).ahead, { higher: 2, sameLevel: 0, capped: false });
    assert.deepEqual((await detail(after)).ahead, { higher: 2, sameLevel: 2, capped: false });
    assert.equal((await detail(await insertJob(db.pool, { queue, runInMs: 60_000 }))).ahead, undefined, 'scheduled: no place in line yet');
    assert.equal((await detail(await insertJob(db.pool, { queue, status: 'completed' }))).ahead, undefined);
    assert.equal((await detail(await insertJob(db.pool, { queue, status: 'running' }))).ahead, undefined);
    // Out of attempts (written by hand: no transition leaves a waiting job so): no claim takes it, so it is not ahead, nor in line.
    const spent = await insertJob(db.pool, { queue, priority: 0, attemptCount: 3, maxAttempts: 3 });
    assert.deepEqual((await detail(mine)).ahead, { higher: 2, sameLevel: 1, capped: false });
    assert.equal((await detail(spent)).ahead, undefined);
    // With live workers on the queue, only the types they have handlers for are ahead: the
    // others wait for a worker that has one, behind nothing and ahead of nothing.
    const typed = uniquePrefix('api-ahead-typed');
    await insertJob(db.pool, { queue: typed, type: 'other.gone', runInMs: -60_000 });
    await insertJob(db.pool, { queue: typed, type: 'demo.sleep' });
    const handled = await insertJob(db.pool, { queue: typed, type: 'demo.noop' });
    assert.deepEqual((await detail(handled)).ahead, { higher: 0, sameLevel: 2, capped: false }, 'no live worker: every type counts');
    const { workerRegister } = await import('@/lib/queue/ops');
    await workerRegister(db.pool, { workerId: `${typed}-worker`, host: 'h', pid: 1, queues: [typed], concurrency: 1, types: ['demo.noop', 'demo.sleep'] });
    assert.deepEqual((await detail(handled)).ahead, { higher: 0, sameLevel: 1, capped: false }, 'other.gone is not ahead');
    await db.pool.query('DELETE FROM workers WHERE worker_id = $1', [`${typed}-worker`]);
    // The count stops at a cap, in all: past it the answer says "at least".
    const busy = uniquePrefix('api-ahead-busy');
    await db.pool.query(`INSERT INTO jobs (queue, type, payload) SELECT $1, 'demo.noop', '{}' FROM generate_series(1, 10001)`, [busy]);
    assert.deepEqual((await detail(await insertJob(db.pool, { queue: busy, priority: 1 }))).ahead, { higher: 10_000, sameLevel: 0, capped: true });
  });

  test('202 {id} after the commit, and the id is rung in Redis', async () => {
    const res = await post({ type: 'demo.sleep', payload: { ms: 5 }, queue: 'api-q' });
    assert.equal(res.status, 202);
    const body = await res.json();
    assert.match(body.id, /^\d+$/);
    assert.equal((await jobRow(db.pool, body.id)).status, 'queued');
    const redis = new Redis(REDIS_URL);
    try {
      assert.deepEqual(await redis.lrange(`${prefix}:queue:api-q`, 0, -1), [body.id]);
    } finally {
      redis.disconnect();
    }
  });

  test('a priority is kept on the job, shown by GET, rung in its level\'s list, and kept by a copy', async () => {
    const res = await post({ type: 'demo.noop', queue: 'api-prio', priority: 7 });
    assert.equal(res.status, 202);
    const { id } = await res.json();
    const got = await (await one.GET(new Request(`http://test/api/jobs/${id}`), params(id))).json();
    assert.equal(got.job.priority, 7);
    const listed = await (await jobs.GET(new Request('http://test/api/jobs?queue=api-prio'))).json();
    assert.deepEqual(listed.jobs.map((j: { id: string; priority: number }) => [j.id, j.priority]), [[id, 7]]);
    const redis = new Redis(REDIS_URL);
    try {
      assert.deepEqual(await redis.lrange(`${prefix}:queue-p7:api-prio`, 0, -1), [id]);
      assert.equal(await redis.exists(`${prefix}:queue:api-prio`), 0, 'not in the default level\'s list');
    } finally {
      redis.disconnect();
    }
    const copied = await (await action(copy.POST, id, {})).json();
    assert.equal((await jobRow(db.pool, copied.id)).priority, 7, "a copy keeps the original's priority");
    const lowered = await (await action(copy.POST, id, { priority: 9 })).json();
    assert.equal((await jobRow(db.pool, lowered.id)).priority, 9, 'or takes the one given');
    const plain = await (await post({ type: 'demo.noop', queue: 'api-prio' })).json();
    assert.equal((await jobRow(db.pool, plain.id)).priority, 0, 'by default 0');
    // The list's priority filter.
    const byPriority = async (p: string) => (await (await jobs.GET(new Request(`http://test/api/jobs?queue=api-prio&priority=${p}`))).json()).jobs.map((j: { id: string }) => j.id);
    assert.deepEqual(await byPriority('7'), [copied.id, id].sort((a, b) => Number(b) - Number(a)));
    assert.deepEqual(await byPriority('0'), [plain.id]);
    assert.deepEqual(await byPriority('3'), []);
    const refused = await jobs.GET(new Request('http://test/api/jobs?priority=10'));
    assert.equal(refused.status, 400);
    assert.match((await refused.json()).error.message, /^priority: must be a priority, 0-9$/);
  });

  test('a refused body says what is wrong with it, and writes nothing', async () => {
    const before = await count();
    const cases: [string | object, RegExp][] = [
      [{ payload: {} }, /^type: /],
      [{ type: 'demo.noop', maxAttempts: 1.5 }, /^maxAttempts: .*int/],
      [{ type: 'demo.noop', maxAttempts: '3' }, /^maxAttempts: .*number/],
      [{ type: 'demo.noop', priority: 10 }, /^priority: must be an integer from 0 \(runs first\) to 9 \(runs last\)$/],
      [{ type: 'demo.noop', priority: -1 }, /^priority: must be an integer from 0 \(runs first\) to 9 \(runs last\)$/],
      [[{ type: 'demo.noop' }, { type: 'demo.noop', extra: 1 }], /^\[1\]: unknown field "extra"$/],
      [Array.from({ length: 1001 }, () => ({ type: 'demo.noop' })), /^body: at most 1000 jobs in one request$/],
      [[], /^body: an empty array enqueues nothing/],
      ['null', /^body: must be a job .* or an array of jobs$/],
      ['"x"', /^body: must be a job .* or an array of jobs$/],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
      const e = (await res.json()).error;
      assert.equal(e.code, 'invalid_request');
      assert.match(e.message, message, JSON.stringify(body).slice(0, 80));
    }
    assert.equal(await count(), before);
  });

  test('query parameters: an unknown one is named as such, a bad cursor says what a cursor is', async () => {
    const list = async (q: string) => (await (await jobs.GET(new Request(`http://test/api/jobs?${q}`))).json()).error?.message;
    assert.equal(await list('foo=bar'), 'unknown field "foo"');
    assert.match(await list('cursor=zzz'), /^cursor: must be a job id, or \(with status=failed or running\) a place in that list/);
  });

  test('an array enqueues many in one statement', async () => {
    const res = await post(Array.from({ length: 5 }, (_, i) => ({ type: 'demo.noop', payload: { i } })));
    assert.equal(res.status, 202);
    const body = await res.json();
    assert.equal(body.jobs.length, 5);
    assert.ok(body.jobs.every((j: { created: boolean }) => j.created));
  });

  test('an idempotency key used by 50 concurrent requests gives one row and the same id to all', async () => {
    const res = await Promise.all(Array.from({ length: 50 }, () => post({ type: 'demo.noop', idempotencyKey: 'order-42' })));
    assert.ok(res.every((r) => r.status === 202));
    const bodies = await Promise.all(res.map((r) => r.json()));
    assert.equal(new Set(bodies.map((b) => b.id)).size, 1);
    assert.equal(bodies.filter((b) => b.created).length, 1);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = 'order-42'`);
    assert.equal(rows[0].n, 1);
  });

  const bad: [string, string | object, number, string][] = [
    ['malformed JSON', '{"type": "demo.noop",', 400, 'invalid_request'],
    ['an empty body', '', 400, 'invalid_request'],
    ['JSON that is not an object', '"demo.noop"', 400, 'invalid_request'],
    ['an unknown type', { type: 'no.such.type' }, 422, 'unknown_type'],
    ['a missing type', { payload: {} }, 400, 'invalid_request'],
    ['a payload over 1 MiB', { type: 'demo.noop', payload: { blob: 'x'.repeat(1024 * 1024) } }, 413, 'payload_too_large'],
    ['maxAttempts 0', { type: 'demo.noop', maxAttempts: 0 }, 400, 'invalid_request'],
    ['maxAttempts 101', { type: 'demo.noop', maxAttempts: 101 }, 400, 'invalid_request'],
    ['maxAttempts as a string', { type: 'demo.noop', maxAttempts: '3' }, 400, 'invalid_request'],
    ['maxAttempts 2.5', { type: 'demo.noop', maxAttempts: 2.5 }, 400, 'invalid_request'],
    ['priority 10', { type: 'demo.noop', priority: 10 }, 400, 'invalid_request'],
    ['priority 1.5', { type: 'demo.noop', priority: 1.5 }, 400, 'invalid_request'],
    ['priority as a string', { type: 'demo.noop', priority: '1' }, 400, 'invalid_request'],
    ['a null priority', { type: 'demo.noop', priority: null }, 400, 'invalid_request'],
    // A tick's key (or a run-now's): the tick would take this job for its own run.
    ['a schedule tick\'s idempotency key', { type: 'demo.noop', idempotencyKey: 'schedule:nightly:2026-12-08T03:00:00.000Z' }, 400, 'invalid_request'],
    ['a run-now\'s idempotency key', { type: 'demo.noop', idempotencyKey: 'schedule-run:nightly:2026-12-08T03:00:00Z' }, 400, 'invalid_request'],
    ['an unparsable runAt', { type: 'demo.noop', runAt: 'tomorrow at noon' }, 400, 'invalid_request'],
    ['a runAt without a time zone', { type: 'demo.noop', runAt: '2026-12-01T10:00:00' }, 400, 'invalid_request'],
    ['an impossible runAt', { type: 'demo.noop', runAt: '2026-13-45T99:00:00Z' }, 400, 'invalid_request'],
    ['a queue name with spaces around it', { type: 'demo.noop', queue: ' mail ' }, 400, 'invalid_request'],
    ['a runAt on February 30', { type: 'demo.noop', runAt: '2026-02-30T00:00:00Z' }, 400, 'invalid_request'],
    ['a runAt on April 31', { type: 'demo.noop', runAt: '2026-04-31T08:00:00+02:00' }, 400, 'invalid_request'],
    ['a runAt on February 29 of a common year', { type: 'demo.noop', runAt: '2025-02-29T00:00:00Z' }, 400, 'invalid_request'],
    ['a runAt at hour 24', { type: 'demo.noop', runAt: '2026-01-01T24:00:00Z' }, 400, 'invalid_request'],
    ['an unknown field', { type: 'demo.noop', max_attempts: 3 }, 400, 'invalid_request'],
    ['a NUL in the queue name', { type: 'demo.noop', queue: 'a\u0000b' }, 400, 'invalid_request'],
    ['a NUL in the payload', { type: 'demo.noop', payload: { s: 'a\u0000b' } }, 400, 'invalid_request'],
    ['a lone surrogate in the payload', { type: 'demo.noop', payload: { s: '\ud800' } }, 400, 'invalid_request'],
    ['an integer beyond ±2^53 in the payload', '{"type":"demo.noop","payload":{"id":12345678901234567890}}', 400, 'invalid_request'],
    ['a number beyond a double in the payload', '{"type":"demo.noop","payload":{"x":[1e400]}}', 400, 'invalid_request'],
    ['a number too small for a double in the payload (read as 0)', '{"type":"demo.noop","payload":{"x":1e-400,"s":"1e-400 in a string is text"}}', 400, 'invalid_request'],
    ['a queue name with a comma (a worker\'s --queues list)', { type: 'demo.noop', queue: 'mail,sms' }, 400, 'invalid_request'],
    ['a payload nested 100 deep', { type: 'demo.noop', payload: JSON.parse('['.repeat(100) + ']'.repeat(100)) }, 400, 'invalid_request'],
    ['a payload that breaks the type schema', { type: 'demo.sleep', payload: { ms: -1 } }, 400, 'invalid_request'],
    ['a queue name of 201 characters', { type: 'demo.noop', queue: 'q'.repeat(201) }, 400, 'invalid_request'],
    ['an idempotency key of 256 characters', { type: 'demo.noop', idempotencyKey: 'k'.repeat(256) }, 400, 'invalid_request'],
    ['an empty array', [], 400, 'invalid_request'],
    ['1001 jobs in one request', Array.from({ length: 1001 }, () => ({ type: 'demo.noop' })), 400, 'invalid_request'],
    ['one bad job in an array', [{ type: 'demo.noop' }, { type: 'demo.noop', maxAttempts: -1 }], 400, 'invalid_request'],
  ];
  for (const [what, body, status, code] of bad) {
    test(`${what}: ${status} ${code}, nothing written`, async () => {
      const before = await count();
      const res = await post(body);
      assert.equal(res.status, status);
      const json = await res.json();
      assert.equal(json.error.code, code);
      assert.equal(typeof json.error.message, 'string');
      assert.ok(json.error.message.length > 0);
      assert.equal(await count(), before);
    });
  }

  test('numbers JSON cannot carry exactly are refused with what to send instead, never stored altered', async () => {
    const before = await count();
    const res = await post('{"type":"demo.noop","payload":{"id":12345678901234567890,"x":1e400}}');
    assert.equal(res.status, 400);
    const { error } = await res.json();
    assert.equal(error.code, 'invalid_request');
    assert.match(error.message, /^payload: /);
    assert.match(error.message, /send (integers beyond ±2\^53|it) as (strings|a string)/);
    assert.equal(await count(), before);
    // The same numbers as strings, and the largest exact integer, go through untouched.
    const ok = await post('{"type":"demo.noop","payload":{"id":"12345678901234567890","n":9007199254740991,"f":-1.5e-300}}');
    assert.equal(ok.status, 202);
    assert.deepEqual((await jobRow(db.pool, (await ok.json()).id)).payload, { id: '12345678901234567890', n: 9007199254740991, f: -1.5e-300 });
  });

  test('a body that is not valid UTF-8 is refused, not stored with its bytes replaced (two keys would become one)', async () => {
    const before = await count();
    // "k\xC3" and "k\xFF": decoded leniently, both were the key "k\uFFFD".
    for (const bad of [0xc3, 0xff]) {
      const body = Buffer.concat([Buffer.from('{"type":"demo.noop","idempotencyKey":"k'), Buffer.from([bad]), Buffer.from('"}')]);
      const res = await jobs.POST(new Request('http://test/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body }));
      assert.equal(res.status, 400);
      assert.match((await res.json()).error.message, /not valid UTF-8/);
    }
    assert.equal(await count(), before);
    // A byte-order mark in front is no error of the body's.
    const bom = await jobs.POST(new Request('http://test/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"type":"demo.noop","queue":"api-bom"}')]) }));
    assert.equal(bom.status, 202);
  });

  test('a queue named "." or ".." is refused: no URL could pause it', async () => {
    for (const queue of ['.', '..']) {
      const res = await post({ type: 'demo.noop', queue });
      assert.equal(res.status, 400);
      assert.match((await res.json()).error.message, /^queue: must not be "\." or "\.\."/);
    }
    assert.equal((await post({ type: 'demo.noop', queue: '...' })).status, 202, 'three dots are a name like any other');
  });

  test('the 1 MiB limit is each payload\'s as stored: a body written with \\u escapes, or 1000 jobs of 2 KB, is accepted', async () => {
    // 400,000 bytes stored, 1.2 MB as Python's json.dumps sends it (é as \\u00e9).
    const escaped = JSON.stringify({ type: 'demo.noop', queue: 'body-size', payload: { a: 'é'.repeat(200_000) } }).replace(/é/g, '\\u00e9');
    assert.ok(escaped.length > 1024 * 1024 + 64 * 1024);
    const one = await post(escaped);
    assert.equal(one.status, 202, await one.clone().text());
    const { rows } = await db.pool.query(`SELECT payload->>'a' AS a FROM jobs WHERE job_id = $1`, [(await one.json()).id]);
    assert.equal(rows[0].a, 'é'.repeat(200_000));
    const many = await post(Array.from({ length: 1000 }, (_, i) => ({ type: 'demo.noop', queue: 'body-size', payload: { i, pad: 'x'.repeat(2_000) } })));
    assert.equal(many.status, 202);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'body-size'`)).rows[0].n, 1001);
  });

  test('a compressed body is refused as such, not as text that is not UTF-8', async () => {
    const { gzipSync } = await import('node:zlib');
    const n = await count();
    const res = await jobs.POST(
      new Request('http://test/api/jobs', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: gzipSync(JSON.stringify({ type: 'demo.noop' })),
      }),
    );
    assert.equal(res.status, 400);
    assert.match((await res.json()).error.message, /^request body is compressed \(Content-Encoding: gzip\): send it uncompressed$/);
    assert.equal(await count(), n);
  });

  test('a declared Content-Length over the limit is refused before reading', async () => {
    const res = await post('{}', { 'content-length': String(50 * 1024 * 1024) });
    assert.equal(res.status, 413);
  });
});

describe('GET /api/jobs and /api/jobs/:id', () => {
  test('lists newest first with a keyset cursor and filters', async () => {
    for (let i = 0; i < 7; i++) await insertJob(db.pool, { queue: 'page-q', status: 'failed' });
    const get = async (qs: string) => (await jobs.GET(new Request(`http://test/api/jobs?${qs}`))).json();
    const p1 = await get('queue=page-q&status=failed&limit=5');
    assert.equal(p1.jobs.length, 5);
    assert.ok(p1.nextCursor);
    const p2 = await get(`queue=page-q&status=failed&limit=5&cursor=${p1.nextCursor}`);
    assert.equal(p2.jobs.length, 2);
    assert.equal(p2.nextCursor, null);
    const ids = [...p1.jobs, ...p2.jobs].map((j: { id: string }) => Number(j.id));
    assert.deepEqual(ids, [...ids].sort((a, b) => b - a));
    for (const qs of ['status=bogus', 'limit=0', 'limit=100000', 'cursor=abc', 'nope=1', 'fresh=0']) {
      const res = await jobs.GET(new Request(`http://test/api/jobs?${qs}`));
      assert.equal(res.status, 400, qs);
    }
  });

  test('a parameter given empty filters nothing, as the contract spells the call (?status=&queue=&type=&q=&cursor=&limit=); an unknown one is still refused', async () => {
    for (let i = 0; i < 3; i++) await insertJob(db.pool, { queue: 'empty-q', status: 'failed' });
    await insertJob(db.pool, { queue: 'empty-q', status: 'queued' });
    const get = (path: string) => jobs.GET(new Request(`http://test${path}`));
    const ids = async (res: Response) => {
      assert.equal(res.status, 200, await res.clone().text());
      return ((await res.json()).jobs as { id: string }[]).map((j) => j.id);
    };
    assert.deepEqual(await ids(await get('/api/jobs?status=&queue=&type=&q=&cursor=&limit=&fresh=1')), await ids(await get('/api/jobs?fresh=1')));
    const failed = await ids(await get('/api/jobs?status=failed&queue=empty-q&type=&q=&cursor=&limit='));
    assert.equal(failed.length, 3);
    for (const qs of ['zz_unknown=', 'status=%20', 'status=&status=failed']) assert.equal((await get(`/api/jobs?${qs}`)).status, 400, qs);
    const exported = await (await import('./jobs/export/route')).GET(new Request('http://test/api/jobs/export?queue=empty-q&status=&type=&format=ndjson'));
    assert.equal(exported.status, 200, await exported.clone().text());
    assert.equal((await exported.text()).trim().split('\n').length, 4 + 1, "the queue's four jobs and the summary line");
  });

  test('the running list\'s "N new" counts a job that starts running after the read, whatever its id (a backlog\'s, a retry)', async () => {
    const get = async (qs: string) => (await jobs.GET(new Request(`http://test/api/jobs?${qs}`))).json();
    const newerCount = async (qs: string) => (await (await newer.GET(new Request(`http://test/api/jobs/newer?${qs}`))).json()).count;
    const old = await insertJob(db.pool, { queue: 'running-order-q' }); // waiting, the smallest id
    const running = await insertJob(db.pool, { queue: 'running-order-q', status: 'running', workerId: 'w:1:a', leaseInMs: 60_000 });
    const page = await get('queue=running-order-q&status=running');
    assert.deepEqual(page.jobs.map((j: { id: string }) => j.id), [running]);
    assert.match(page.newerAfter, /^\d+\.0$/, 'the moment of the read');
    assert.equal(await newerCount(`queue=running-order-q&status=running&after=${page.newerAfter}`), 0);
    // The older job starts now: by id it is behind the page's newest, but it is new to the list.
    await db.pool.query(
      `UPDATE jobs SET status = 'running', worker_id = 'w:1:a', attempt_count = 1, started_at = now(), heartbeat_at = now(), lease_expires_at = now() + interval '1 min' WHERE job_id = $1`,
      [old],
    );
    await waitFor('the start to be counted', async () => (await newerCount(`queue=running-order-q&status=running&after=${page.newerAfter}`)) === 1);
    // The job seen running that finishes does not take a new one off the count.
    await db.pool.query(`UPDATE jobs SET status = 'completed', worker_id = NULL, lease_expires_at = NULL, finished_at = now() WHERE job_id = $1`, [running]);
    // (Read past the route's shared second, which may still serve the count above.)
    const { countNewer } = await import('@/lib/queue/read');
    assert.deepEqual(await countNewer(db.pool, { queue: 'running-order-q', status: 'running' }, page.newerAfter), { count: 1, capped: false });
    // A moment goes with the failed and running lists only.
    const refused = await newer.GET(new Request(`http://test/api/jobs/newer?queue=running-order-q&status=queued&after=${page.newerAfter}`));
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).error.message, 'after: a moment (<microseconds>.<job id>) goes with status=failed or status=running');
  });

  test('the running list is in the order jobs started, the latest first, page after page: a job that starts with an old id heads it', async () => {
    const get = async (qs: string) => (await jobs.GET(new Request(`http://test/api/jobs?${qs}&fresh=1`))).json();
    const ids: string[] = [];
    for (let k = 0; k < 3; k++) ids.push(await insertJob(db.pool, { queue: 'running-start-q', status: 'running', workerId: 'w:1:a', leaseInMs: 60_000 }));
    // Started in the order 2, 0, 1 (the oldest id last but one).
    await db.pool.query(
      `UPDATE jobs SET started_at = now() - (CASE job_id WHEN $1::bigint THEN 3 WHEN $2::bigint THEN 2 ELSE 1 END) * interval '1 min' WHERE job_id = ANY($3::bigint[])`,
      [ids[2], ids[0], ids],
    );
    const first = await get('queue=running-start-q&status=running&limit=2');
    assert.deepEqual(first.jobs.map((j: { id: string }) => j.id), [ids[1], ids[0]]);
    assert.match(first.nextCursor, /^\d+\.\d+$/, 'a place in the list: when it started, and its id');
    const second = await get(`queue=running-start-q&status=running&limit=2&cursor=${first.nextCursor}`);
    assert.deepEqual(second.jobs.map((j: { id: string }) => j.id), [ids[2]]);
    assert.equal(second.nextCursor, null);
    // A place in it goes with the failed and running lists only.
    assert.equal((await jobs.GET(new Request(`http://test/api/jobs?queue=running-start-q&status=queued&cursor=${first.nextCursor}`))).status, 400);
  });

  test('the failed list is in the order jobs failed, newest first; "N new" counts a job that fails later whatever its id', async () => {
    const get = async (qs: string) => (await jobs.GET(new Request(`http://test/api/jobs?${qs}`))).json();
    const newerCount = async (qs: string) => (await (await newer.GET(new Request(`http://test/api/jobs/newer?${qs}`))).json()).count;
    const old = await insertJob(db.pool, { queue: 'failed-order-q' }); // enqueued first: the smallest id
    const ids: string[] = [];
    for (let k = 0; k < 3; k++) ids.push(await insertJob(db.pool, { queue: 'failed-order-q', status: 'failed', attemptCount: 3, maxAttempts: 3 }));
    const first = await get('queue=failed-order-q&status=failed&limit=2');
    assert.deepEqual(first.jobs.map((j: { id: string }) => j.id), [ids[2], ids[1]]);
    assert.match(first.nextCursor, /^\d+\.\d+$/);
    assert.match(first.newerAfter, /^\d+\.0\.3$/, 'a place before the read, and the 3 failed jobs the read saw after it');
    const second = await get(`queue=failed-order-q&status=failed&limit=2&cursor=${first.nextCursor}`);
    assert.deepEqual(second.jobs.map((j: { id: string }) => j.id), [ids[0]]);
    assert.equal(second.nextCursor, null);
    assert.equal(await newerCount(`queue=failed-order-q&status=failed&after=${first.newerAfter}`), 0);
    // The oldest job fails now: it heads the list, and is counted as new.
    await db.pool.query(`UPDATE jobs SET status = 'failed', finished_at = now(), attempt_count = max_attempts WHERE job_id = $1`, [old]);
    // (The count is shared by viewers for a second: the one above may still be served.)
    await waitFor('the new failure to be counted', async () => (await newerCount(`queue=failed-order-q&status=failed&after=${first.newerAfter}`)) === 1);
    assert.equal((await get('queue=failed-order-q&status=failed&limit=2&fresh=1')).jobs[0].id, old);
    // Other lists stay in id order, with the newest id as their anchor.
    const all = await get('queue=failed-order-q&fresh=1');
    assert.deepEqual(all.jobs.map((j: { id: string }) => j.id), [...ids].reverse().concat(old));
    assert.equal(all.newerAfter, all.headId);
    // A place in the failed list goes with status=failed only; a malformed one is a 400.
    assert.equal((await newer.GET(new Request(`http://test/api/jobs/newer?queue=failed-order-q&after=${first.newerAfter}`))).status, 400);
    for (const bad of ['1.2.3', '.5', '12345678901234567890.1', '1.0x']) {
      assert.equal((await jobs.GET(new Request(`http://test/api/jobs?status=failed&cursor=${bad}`))).status, 400, bad);
    }
  });

  test('minAttempts=2 lists the jobs that needed more than one try; a bulk action on that filter touches only them', async () => {
    const get = async (qs: string) => (await jobs.GET(new Request(`http://test/api/jobs?${qs}`))).json();
    const queue = 'attempts-filter-q';
    await insertJob(db.pool, { queue, status: 'completed', attemptCount: 1, maxAttempts: 3 });
    const second = await insertJob(db.pool, { queue, status: 'completed', attemptCount: 2, maxAttempts: 3 });
    const dead = await insertJob(db.pool, { queue, status: 'failed', attemptCount: 3, maxAttempts: 3 });
    await insertJob(db.pool, { queue }); // never claimed
    const ids = async (qs: string) => (await get(`queue=${queue}&${qs}`)).jobs.map((j: { id: string }) => j.id);
    assert.deepEqual(await ids('minAttempts=2'), [dead, second]);
    assert.deepEqual(await ids('minAttempts=3'), [dead]);
    assert.deepEqual(await ids('minAttempts=2&status=completed'), [second]);
    for (const bad of ['0', '101', 'x']) {
      const res = await jobs.GET(new Request(`http://test/api/jobs?minAttempts=${bad}`));
      assert.equal(res.status, 400, bad);
      assert.match((await res.json()).error.message, /minAttempts/);
    }
    const preview = await actions.POST(
      new Request('http://test/api/actions/requeue', { method: 'POST', body: JSON.stringify({ filter: { queue, minAttempts: '2' }, preview: true }) }),
      { params: Promise.resolve({ action: 'requeue' }) },
    );
    assert.equal(preview.status, 200);
    assert.equal((await preview.json()).total, 2);
  });

  test("a requeue's preview of a scheduled job goes by the database's clock, not the console host's (an hour fast, or slow)", async () => {
    const scheduled = await insertJob(db.pool, { queue: 'skew-requeue-q', runInMs: 60_000 });
    const preview = async (skewMs: number) => {
      const realNow = Date.now;
      Date.now = () => realNow() + skewMs;
      try {
        const res = await actions.POST(
          new Request('http://test/api/actions/requeue', { method: 'POST', body: JSON.stringify({ ids: [scheduled], preview: true }) }),
          { params: Promise.resolve({ action: 'requeue' }) },
        );
        return ((await res.json()).items as { id: string; outcome: string; reason: string }[])[0]!;
      } finally {
        Date.now = realNow;
      }
    };
    // Due in a minute on the database's clock: a requeue makes it due now, whatever the host's clock says.
    for (const skew of [3_600_000, 0, -3_600_000]) {
      const item = await preview(skew);
      assert.match(item.reason, /^scheduled for .* → due now$/, `skew ${skew} ms: ${item.outcome}, ${item.reason}`);
    }
  });

  test("a requeue's preview warns of a suspect: a likely poison job that may take its worker down again", async () => {
    const queue = 'suspect-requeue-q';
    const poison = await insertJob(db.pool, { queue, status: 'failed', attemptCount: 3, leaseLostStreak: 3 });
    const victim = await insertJob(db.pool, { queue, status: 'failed', attemptCount: 3, leaseLostStreak: 1 });
    const res = await actions.POST(
      new Request('http://test/api/actions/requeue', { method: 'POST', body: JSON.stringify({ ids: [poison, victim], resetAttempts: true, preview: true }) }),
      { params: Promise.resolve({ action: 'requeue' }) },
    );
    assert.equal(res.status, 200);
    const reasons = new Map(((await res.json()).items as { id: string; reason: string }[]).map((i) => [i.id, i.reason]));
    assert.match(reasons.get(poison)!, /^failed → queued with a fresh attempt budget; a suspect: its last 3 attempts ended with their worker gone \(a likely poison job\)/);
    assert.equal(reasons.get(victim), 'failed → queued with a fresh attempt budget', 'one lost lease is what a crash does to every job in hand: no warning');
  });

  test("an action's options that belong to another action are refused, not ignored and recorded as if applied; the console's false ones pass", async () => {
    const queued = await insertJob(db.pool, { queue: 'opts-q' });
    const act = (action: string, body: object) =>
      actions.POST(new Request(`http://test/api/actions/${action}`, { method: 'POST', body: JSON.stringify(body) }), { params: Promise.resolve({ action }) });
    const audits = async () => (await db.pool.query('SELECT count(*)::int AS n FROM audit_log')).rows[0].n as number;
    const before = await audits();
    for (const [action, body, why] of [
      ['cancel', { ids: [queued], resetAttempts: true }, /^resetAttempts: only requeue takes it/],
      ['delete', { ids: [queued], revokeLease: true }, /^revokeLease: only requeue takes it/],
      ['cancel', { ids: [queued], expectIds: ['5'] }, /^expectIds: only with all/],
      ['requeue', { ids: [queued], expectIds: [queued] }, /^expectIds: only with all/],
    ] as const) {
      const res = await act(action, body);
      assert.equal(res.status, 400, `${action} ${JSON.stringify(body)}`);
      assert.match((await res.json()).error.message, why);
    }
    assert.equal((await jobRow(db.pool, queued)).status, 'queued');
    assert.equal(await audits(), before);
    const ok = await act('cancel', { ids: [queued], resetAttempts: false, revokeLease: false, reason: 'as the console sends it' });
    assert.equal(ok.status, 200);
    const { rows } = await db.pool.query(`SELECT details FROM audit_log WHERE action = 'cancel' ORDER BY audit_id DESC LIMIT 1`);
    assert.deepEqual([rows[0].details.resetAttempts, rows[0].details.revokeLease], [undefined, undefined], "a cancel's entry carries no requeue options");
  });

  test('due=now and due=later split the waiting jobs by when they are due (a scheduled view)', async () => {
    const get = async (qs: string) => (await jobs.GET(new Request(`http://test/api/jobs?${qs}`))).json();
    const queue = 'due-filter-q';
    const dueNow = await insertJob(db.pool, { queue, runInMs: -1_000 });
    const scheduled = await insertJob(db.pool, { queue, runInMs: 3_600_000 });
    const backingOff = await insertJob(db.pool, { queue, status: 'retrying', attemptCount: 1, runInMs: 60_000 });
    await insertJob(db.pool, { queue, status: 'completed' }); // its run_at is history: in neither
    const ids = async (qs: string) => (await get(`queue=${queue}&${qs}`)).jobs.map((j: { id: string }) => j.id);
    assert.deepEqual(await ids('due=later'), [backingOff, scheduled]);
    assert.deepEqual(await ids('due=later&status=queued'), [scheduled]);
    assert.deepEqual(await ids('due=now'), [dueNow]);
    const bad = await jobs.GET(new Request(`http://test/api/jobs?due=tomorrow`));
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /due/);
    // An action pins its preview's moment (finishedBy): a job coming due after it is not taken in.
    const { listJobs } = await import('@/lib/queue/read');
    const soon = await insertJob(db.pool, { queue, runInMs: 1_500 });
    const previewAt = (await db.pool.query(`SELECT (extract(epoch FROM now()) * 1000000)::bigint::text AS us`)).rows[0].us as string;
    await waitFor('the job to come due', async () => (await ids('due=now&fresh=1')).includes(soon));
    const pinned = await listJobs(db.pool, { queue, due: 'now', finishedBy: previewAt, limit: 50 });
    assert.deepEqual(pinned.jobs.map((j) => j.id), [dueNow], 'due as of the preview');
  });

  test('createdSince and finishedSince: a span back from the database clock, or a moment; refused when neither', async () => {
    const get = async (qs: string) => (await jobs.GET(new Request(`http://test/api/jobs?${qs}`))).json();
    const queue = 'since-filter-q';
    const ids = async (qs: string) => (await get(`queue=${queue}&fresh=1&${qs}`)).jobs.map((j: { id: string }) => j.id);
    const old = await insertJob(db.pool, { queue, status: 'failed', attemptCount: 3, maxAttempts: 3 });
    const recent = await insertJob(db.pool, { queue, status: 'failed', attemptCount: 3, maxAttempts: 3 });
    const waiting = await insertJob(db.pool, { queue });
    // Enqueued two days ago, failed three hours ago; the others now.
    await db.pool.query(`UPDATE jobs SET created_at = now() - interval '2 days', finished_at = now() - interval '3 hours' WHERE job_id = $1`, [old]);
    assert.deepEqual(await ids('createdSince=1h'), [waiting, recent]);
    assert.deepEqual(await ids('createdSince=7d'), [waiting, recent, old]);
    assert.deepEqual(await ids('finishedSince=1h'), [recent], 'a job not finished is in no finished window');
    assert.deepEqual(await ids('status=failed&finishedSince=24h'), [recent, old]);
    assert.deepEqual(await ids('status=failed&finishedSince=90m'), [recent]);
    const moment = (await db.pool.query(`SELECT to_char((now() - interval '4 hours') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS t`)).rows[0].t as string;
    assert.deepEqual(await ids(`finishedSince=${encodeURIComponent(moment)}`), [recent, old]);
    assert.deepEqual(await ids(`createdSince=${encodeURIComponent(moment.replace('Z', '+00:00'))}`), [waiting, recent]);
    for (const bad of ['1w', '0h', 'yesterday', '2026-12-03', '2026-12-03T13:00:00', '12345h', '2026-02-30T00:00:00Z', '2026-01-01T00:00:00+20:00', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59-01:00']) {
      const res = await jobs.GET(new Request(`http://test/api/jobs?finishedSince=${encodeURIComponent(bad)}`));
      assert.equal(res.status, 400, bad);
      assert.match((await res.json()).error.message, /finishedSince/);
    }
    // An action over "failed in the last 4 hours" takes what its preview saw.
    const preview = await (await actions.POST(
      new Request('http://test/api/actions/requeue', { method: 'POST', headers: { 'content-type': 'application/json', origin: 'http://test' }, body: JSON.stringify({ filter: { queue, status: 'failed', finishedSince: '4h' }, preview: true }) }),
      { params: Promise.resolve({ action: 'requeue' }) },
    )).json();
    assert.deepEqual([preview.total, preview.changed], [2, 2], JSON.stringify(preview).slice(0, 300));
    assert.deepEqual(preview.items.map((i: { id: string }) => i.id).sort(), [old, recent].sort());
    // And over a window from a moment (the preview's pin once went into the statement
    // unused, untyped: PostgreSQL refused it and the preview was a 500).
    for (const filter of [{ finishedSince: moment }, { createdSince: moment }]) {
      const res = await actions.POST(
        new Request('http://test/api/actions/requeue', { method: 'POST', headers: { 'content-type': 'application/json', origin: 'http://test' }, body: JSON.stringify({ filter: { queue, status: 'failed', ...filter }, preview: true }) }),
        { params: Promise.resolve({ action: 'requeue' }) },
      );
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body).slice(0, 300));
      assert.deepEqual(body.items.map((i: { id: string }) => i.id).sort(), (filter.finishedSince ? [old, recent] : [recent]).sort(), JSON.stringify(filter));
    }
  });

  test('"N new" counts a job that failed as the failed list was read (its transaction began before the read and committed after)', async () => {
    const get = async (qs: string) => (await jobs.GET(new Request(`http://test/api/jobs?${qs}`))).json();
    const newerCount = async (qs: string) => (await (await newer.GET(new Request(`http://test/api/jobs/newer?${qs}`))).json()).count;
    const seen = await insertJob(db.pool, { queue: 'failed-race-q', status: 'failed', attemptCount: 3, maxAttempts: 3 });
    const racing = await insertJob(db.pool, { queue: 'failed-race-q' });
    const tx = await db.pool.connect();
    try {
      await tx.query('BEGIN');
      // finished_at = now(): the transaction's start, before the read below.
      await tx.query(`UPDATE jobs SET status = 'failed', finished_at = now(), attempt_count = max_attempts WHERE job_id = $1`, [racing]);
      const page = await get('queue=failed-race-q&status=failed&fresh=1');
      assert.deepEqual(page.jobs.map((j: { id: string }) => j.id), [seen], 'not committed yet: not in the page');
      await tx.query('COMMIT');
      assert.equal(await newerCount(`queue=failed-race-q&status=failed&after=${page.newerAfter}`), 1, 'so it is new');
      const again = await get('queue=failed-race-q&status=failed&fresh=1');
      assert.deepEqual(again.jobs.map((j: { id: string }) => j.id), [racing, seen]);
      assert.equal(await newerCount(`queue=failed-race-q&status=failed&after=${again.newerAfter}`), 0, 'and once read, no longer');
      // A seen count no read could give is refused: it would lift the count's limit.
      const tooMany = await newer.GET(new Request(`http://test/api/jobs/newer?status=failed&after=0.0.999999999`));
      assert.equal(tooMany.status, 400);
    } finally {
      tx.release();
    }
  });

  test('a filtered failed list reads the failed rows window by window, in the order of failure, across pages', async () => {
    const { listJobs } = await import('@/lib/queue/read');
    // 3,000 failed rows of which 6 of a rare type, spread over three windows of the index.
    const { rows } = await db.pool.query(
      `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, finished_at, error)
       SELECT 'window-q', CASE WHEN i % 500 = 0 THEN 'rare.type' ELSE 'common.type' END, 'failed', '{}', 1, 1, 1,
              now() - make_interval(secs => i), 'boom'
         FROM generate_series(1, 3000) i
       RETURNING job_id::text AS id, type`,
    );
    const rare = rows.filter((r) => r.type === 'rare.type').map((r) => r.id as string); // latest failure first
    const first = await listJobs(db.pool, { status: 'failed', type: 'rare.type', limit: 4 });
    assert.deepEqual(first.jobs.map((j) => j.id), rare.slice(0, 4));
    assert.ok(first.nextCursor);
    const second = await listJobs(db.pool, { status: 'failed', type: 'rare.type', limit: 4, cursor: first.nextCursor! });
    assert.deepEqual(second.jobs.map((j) => j.id), rare.slice(4));
    assert.equal(second.nextCursor, null);
    // One job by its id, however long ago it failed: one query, not a walk through the windows.
    const oldest = rows[rows.length - 1]!.id as string;
    assert.deepEqual((await listJobs(db.pool, { status: 'failed', q: oldest, limit: 50 })).jobs.map((j) => j.id), [oldest]);
    assert.deepEqual((await listJobs(db.pool, { status: 'failed', id: oldest, limit: 50 })).jobs.map((j) => j.id), [oldest]);
  });

  test('a page is shared for a second; fresh=1 reads it now (what "Show N new" asks for)', async () => {
    const get = async (qs: string) => (await jobs.GET(new Request(`http://test/api/jobs?${qs}`))).json();
    const first = await insertJob(db.pool, { queue: 'fresh-q' });
    const t0 = performance.now();
    assert.deepEqual((await get('queue=fresh-q')).jobs.map((j: { id: string }) => j.id), [first]);
    const second = await insertJob(db.pool, { queue: 'fresh-q' });
    const shared = (await get('queue=fresh-q')).jobs.map((j: { id: string }) => j.id);
    // (Within the shared second, which a very slow machine could overrun.)
    if (performance.now() - t0 < 900) assert.deepEqual(shared, [first], 'the shared page, read before the insert');
    assert.deepEqual((await get('queue=fresh-q&fresh=1')).jobs.map((j: { id: string }) => j.id), [second, first]);
    assert.equal((await jobs.GET(new Request('http://test/api/jobs?fresh=yes'))).status, 400);
  });

  test('a query string that is not valid percent-encoded UTF-8 is refused, as a path is, not searched for as U+FFFD', async () => {
    for (const qs of ['queue=%E9', 'q=%ED%A0%80', 'type=%']) {
      const res = await jobs.GET(new Request(`http://test/api/jobs?${qs}`));
      assert.equal(res.status, 400, qs);
      assert.match((await res.json()).error.message, /not valid percent-encoded UTF-8/);
    }
    assert.equal((await jobs.GET(new Request('http://test/api/jobs?queue=caf%C3%A9&q=a+b%20c'))).status, 200);
  });

  test('limit is a number written in digits: 0x10, 1e1 or " 5" are refused, not read as 16, 10 and 5', async () => {
    for (const limit of ['0x10', '1e1', '%205', '0b11']) {
      const res = await jobs.GET(new Request(`http://test/api/jobs?limit=${limit}`));
      assert.equal(res.status, 400, limit);
      assert.match((await res.json()).error.message, /limit: must be a whole number written in digits/);
    }
    assert.equal((await jobs.GET(new Request('http://test/api/jobs?limit=16'))).status, 200);
  });

  test('one job with its attempts; 404 for unknown or malformed ids', async () => {
    const id = await insertJob(db.pool, { status: 'running', workerId: 'w-1' });
    const res = await one.GET(new Request('http://test'), params(id));
    const body = await res.json();
    assert.equal(body.job.id, id);
    assert.equal(body.attempts.length, 1, 'the running attempt is shown');
    assert.equal(body.attempts[0].outcome, null);
    for (const bad of ['999999999', 'abc', '-1', '99999999999999999999', '1;DROP TABLE jobs']) {
      assert.equal((await one.GET(new Request('http://test'), params(bad))).status, 404, bad);
    }
  });
});

describe('actions', () => {
  test('requeue a failed job: 200; a running job with a live lease: 409 with who holds it', async () => {
    const failed = await insertJob(db.pool, { status: 'failed', attemptCount: 3, maxAttempts: 3 });
    const r1 = await action(requeue.POST, failed);
    assert.equal(r1.status, 200);
    assert.equal((await r1.json()).outcome, 'requeued');
    const running = await insertJob(db.pool, { status: 'running', workerId: 'worker-7', leaseInMs: 41_500 });
    const r2 = await action(requeue.POST, running);
    assert.equal(r2.status, 409);
    const b2 = await r2.json();
    assert.equal(b2.error.code, 'state_forbids');
    assert.match(b2.error.message, /lease still held by worker-7 for 4[01] s/);
    const r3 = await action(requeue.POST, running, { revokeLease: true });
    assert.equal((await r3.json()).outcome, 'revoked');
    assert.equal((await action(requeue.POST, '987654321')).status, 404);
    assert.equal((await action(requeue.POST, failed, { resetAttempts: 'yes' } as never)).status, 400);
  });

  test("an operator's action shows in the list at once, though lists are shared for a second", async () => {
    const id = await insertJob(db.pool, { status: 'failed', queue: 'shared-list-q' });
    const list = async () => (await (await jobs.GET(new Request('http://test/api/jobs?queue=shared-list-q'))).json()).jobs.map((j: { status: string }) => j.status);
    assert.deepEqual(await list(), ['failed']);
    assert.equal((await action(requeue.POST, id)).status, 200);
    assert.deepEqual(await list(), ['queued'], 'the requeue cleared the shared answer');
  });

  test('a preview changes nothing, so it leaves the shared reads cached', async () => {
    await insertJob(db.pool, { status: 'failed', queue: 'preview-cache-q' });
    await jobs.GET(new Request('http://test/api/jobs?queue=preview-cache-q'));
    assert.ok(readCache.size > 0);
    const res = await recover.POST(new Request('http://test', { method: 'POST', body: JSON.stringify({ dryRun: true }) }));
    assert.equal(res.status, 200);
    assert.ok(readCache.size > 0, 'a dry run kept the cache');
    const pre = await actions.POST(new Request('http://test/api/actions/requeue', { method: 'POST', body: JSON.stringify({ filter: { queue: 'preview-cache-q' }, preview: true }) }), { params: Promise.resolve({ action: 'requeue' }) });
    assert.equal(pre.status, 200);
    assert.ok(readCache.size > 0, 'a preview kept the cache');
    const applied = await actions.POST(new Request('http://test/api/actions/requeue', { method: 'POST', body: JSON.stringify({ filter: { queue: 'preview-cache-q' } }) }), { params: Promise.resolve({ action: 'requeue' }) });
    assert.equal(applied.status, 200);
    assert.equal(readCache.size, 0, 'the action itself cleared it');
  });

  test('cancel a queued job: 200; a completed one: 409 "already completed"', async () => {
    const q = await insertJob(db.pool);
    assert.equal((await action(cancel.POST, q)).status, 200);
    const done = await insertJob(db.pool, { status: 'completed' });
    const r = await action(cancel.POST, done);
    assert.equal(r.status, 409);
    assert.equal((await r.json()).error.message, 'already completed');
  });

  test('recover: a preview lists an expired lease without moving it; applying moves it', async () => {
    const id = await insertJob(db.pool, { status: 'running', workerId: 'gone', leaseInMs: -3_000 });
    const pre = await recover.POST(new Request('http://test', { method: 'POST', body: JSON.stringify({ dryRun: true }) }));
    const preview = await pre.json();
    assert.ok(preview.expired.some((e: { id: string }) => e.id === id));
    assert.equal((await jobRow(db.pool, id)).status, 'running');
    const applied = await (await recover.POST(new Request('http://test', { method: 'POST', body: '{}' }))).json();
    assert.ok(applied.expired.some((e: { id: string; status: string }) => e.id === id && e.status === 'retrying'));
    assert.equal((await jobRow(db.pool, id)).status, 'retrying');
  });

  test("copy a dead job with its payload mended: a new job of its type, the original left as it ran, one audit entry on both", async () => {
    const dead = await insertJob(db.pool, { status: 'failed', type: 'demo.sleep', queue: 'copy-q', payload: { ms: 'ten' }, attemptCount: 3, maxAttempts: 3 });
    const before = await jobRow(db.pool, dead);
    const res = await action(copy.POST, dead, { payload: { ms: 10 }, reason: 'ms was a word' });
    assert.equal(res.status, 202);
    const body = await res.json();
    assert.equal(body.copyOf, dead);
    assert.equal(body.created, true);
    const made = await jobRow(db.pool, body.id);
    assert.deepEqual(
      { type: made.type, queue: made.queue, status: made.status, payload: made.payload, max_attempts: made.max_attempts, attempt_count: made.attempt_count },
      { type: 'demo.sleep', queue: 'copy-q', status: 'queued', payload: { ms: 10 }, max_attempts: 3, attempt_count: 0 },
    );
    assert.deepEqual(await jobRow(db.pool, dead), before, 'the original is untouched');
    const { rows } = await db.pool.query(`SELECT action, state, job_ids, reason, details FROM audit_log WHERE $1 = ANY(job_ids) ORDER BY audit_id`, [dead]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].action, 'copy');
    assert.equal(rows[0].state, 'done');
    assert.deepEqual(rows[0].job_ids.map(String), [dead, body.id]);
    assert.equal(rows[0].reason, 'ms was a word');
    assert.equal(rows[0].details.copy, body.id);

    // Left out: the payload and queue as they were; another queue when asked.
    const same = await (await action(copy.POST, body.id)).json();
    assert.deepEqual((await jobRow(db.pool, same.id)).payload, { ms: 10 });
    const moved = await (await action(copy.POST, body.id, { queue: 'copy-elsewhere', maxAttempts: 1 })).json();
    const m = await jobRow(db.pool, moved.id);
    assert.deepEqual([m.queue, m.max_attempts], ['copy-elsewhere', 1]);
  });

  test('a copy checked as an enqueue: a payload its type refuses, a bad field or no such job writes nothing', async () => {
    const dead = await insertJob(db.pool, { status: 'failed', type: 'demo.sleep', queue: 'copy-bad-q', payload: { ms: 'ten' } });
    const jobsBefore = await count();
    const audits = async () => (await db.pool.query(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'copy'`)).rows[0].n as number;
    const auditsBefore = await audits();
    const refused = await action(copy.POST, dead);
    assert.equal(refused.status, 400, 'the original payload does not fit demo.sleep');
    assert.match((await refused.json()).error.message, /^payload\.ms: /);
    assert.equal((await action(copy.POST, dead, { payload: { ms: 2 ** 60 } })).status, 400, 'a number JSON cannot carry exactly');
    assert.equal((await action(copy.POST, dead, { type: 'demo.noop' } as never)).status, 400, 'the type is the original\'s');
    assert.equal((await action(copy.POST, dead, { queue: ' padded ' })).status, 400);
    assert.equal((await action(copy.POST, '987654321', { payload: { ms: 1 } })).status, 404);
    assert.equal(await count(), jobsBefore);
    assert.equal(await audits(), auditsBefore, 'a refused copy leaves no audit entry');
  });

  test('reschedule moves a waiting job (its due time, its priority) and refuses one that runs or has finished', async () => {
    const queue = 'api-reschedule';
    const waiting = await insertJob(db.pool, { queue, type: 'demo.noop', payload: {}, attemptCount: 1, status: 'retrying', runInMs: 3_600_000 });
    const row = () => jobRow(db.pool, waiting);
    const dbNow = async () => (await db.pool.query(`SELECT now() AS now`)).rows[0].now as Date;
    // Ahead of the backlog, and due now: rung at its new level.
    const moved = await action(reschedule.POST, waiting, { runAt: '2020-01-01T00:00:00Z', priority: 1, reason: 'the customer is waiting' });
    assert.equal(moved.status, 200);
    const item = await moved.json();
    assert.equal(item.outcome, 'rescheduled');
    assert.equal(item.job.priority, 1);
    let r = await row();
    const movedTo = r.run_at.toISOString();
    assert.equal(r.status, 'retrying', 'its state, attempts and budget stay');
    assert.equal(r.attempt_count, 1);
    assert.ok(r.run_at <= (await dbNow()), 'a time already past is now');
    const redis = new Redis(REDIS_URL);
    try {
      assert.deepEqual(await redis.lrange(`${prefix}:queue-p1:${queue}`, 0, -1), [waiting]);
    } finally {
      redis.disconnect();
    }
    // Later, the priority kept.
    assert.equal((await action(reschedule.POST, waiting, { runAt: '2099-06-01T12:00:00Z' })).status, 200);
    r = await row();
    assert.equal(r.run_at.toISOString(), '2099-06-01T12:00:00.000Z');
    assert.equal(r.priority, 1);
    const audit = (await db.pool.query(`SELECT details, reason FROM audit_log WHERE action = 'reschedule' AND $1 = ANY(job_ids) ORDER BY audit_id`, [waiting])).rows;
    assert.deepEqual(audit.map((a) => [a.details.runAt, a.details.priority, a.details.outcome]), [[movedTo, 1, 'rescheduled'], ['2099-06-01T12:00:00.000Z', null, 'rescheduled']], 'the due time as stored: 2020 became now');
    assert.equal(audit[0].reason, 'the customer is waiting');

    // Nothing to change, or nonsense: 400, nothing written.
    for (const bad of [{}, { priority: 10 }, { runAt: 'tomorrow' }, { runAt: '2099-01-01T00:00:00Z', queue: 'other' }]) {
      const res = await action(reschedule.POST, waiting, bad);
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.ok((await res.json()).error.message, JSON.stringify(bad));
    }
    assert.match((await (await action(reschedule.POST, waiting, {})).json()).error.message, /give runAt, priority or both/);
    assert.equal((await row()).run_at.toISOString(), '2099-06-01T12:00:00.000Z');
    // A running job is its worker's, a finished one is requeued instead: 409 with why; no such job: 404.
    const running = await insertJob(db.pool, { queue, status: 'running', workerId: 'w-resched' });
    const refused = await action(reschedule.POST, running, { priority: 3 });
    assert.equal(refused.status, 409);
    assert.match((await refused.json()).error.message, /^running on w-resched: only a waiting job \(queued or retrying\) can be rescheduled/);
    const dead = await insertJob(db.pool, { queue, status: 'failed', attemptCount: 3 });
    assert.match((await (await action(reschedule.POST, dead, { priority: 3 })).json()).error.message, /already failed: .*requeue it to run it again/);
    assert.equal((await jobRow(db.pool, running)).priority, 0);
    assert.equal((await action(reschedule.POST, '987654321', { priority: 3 })).status, 404);
  });

  test('a due job moved to a lower priority leaves its old level: a worker popping that level no longer takes it first', async () => {
    const queue = 'api-demote';
    const res = await post({ type: 'demo.noop', queue });
    const { id } = await res.json();
    const redis = new Redis(REDIS_URL);
    try {
      assert.deepEqual(await redis.lrange(`${prefix}:queue:${queue}`, 0, -1), [id]);
      assert.equal((await action(reschedule.POST, id, { priority: 9 })).status, 200);
      assert.deepEqual(await redis.lrange(`${prefix}:queue:${queue}`, 0, -1), [], 'out of level 0');
      assert.deepEqual(await redis.lrange(`${prefix}:queue-p9:${queue}`, 0, -1), [id], 'rung at level 9');
      // Moved ahead again: rung at its new level; the ring left at 9 is only a duplicate.
      assert.equal((await action(reschedule.POST, id, { priority: 2 })).status, 200);
      assert.deepEqual(await redis.lrange(`${prefix}:queue-p2:${queue}`, 0, -1), [id]);
    } finally {
      redis.disconnect();
    }
  });

  test('stats count jobs per status and queue', async () => {
    const s = await (await stats.GET()).json();
    assert.ok(s.counts.queued >= 1);
    assert.ok(s.queues.some((q: { queue: string }) => q.queue === 'page-q'));
  });
});

describe('what no route serves', () => {
  const errorOf = async (res: Response, status: number, code: string) => {
    assert.equal(res.status, status);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const body = await res.json();
    assert.equal(body.error.code, code);
    assert.ok(body.error.message.length > 0);
    return body.error.message as string;
  };

  test('an unknown /api path: 404 in the error shape, whatever the method', async () => {
    const unknown = await import('./[[...path]]/route');
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      const message = await errorOf(await unknown[m](new Request('http://test/api/nonexistent', { method: m })), 404, 'not_found');
      assert.match(message, /\/api\/nonexistent/);
    }
  });

  test('a method a route does not serve: 405 method_not_allowed in the error shape, with Allow', async () => {
    const queue = await import('./queues/[name]/route');
    const del = await one.DELETE(new Request('http://test/api/jobs/1', { method: 'DELETE' }));
    assert.equal(del.headers.get('allow'), 'GET, HEAD, OPTIONS');
    assert.match(await errorOf(del, 405, 'method_not_allowed'), /^DELETE .*GET, HEAD, OPTIONS/);
    const get = await queue.GET(new Request('http://test/api/queues/x'));
    assert.equal(get.headers.get('allow'), 'OPTIONS, POST');
    await errorOf(get, 405, 'method_not_allowed');
    // OPTIONS lists what the route serves (Next's own would list the 405 handlers too).
    const options = await jobs.OPTIONS(new Request('http://test/api/jobs', { method: 'OPTIONS' }));
    assert.equal(options.status, 204);
    assert.equal(options.headers.get('allow'), 'GET, HEAD, OPTIONS, POST');
  });

  test('every route file answers every method it does not serve with the JSON 405', async () => {
    const { findRouteFiles, HTTP_METHODS, loadRoutes } = await import('../../test/api-routes');
    const { root } = await import('../../test/processes');
    const path = await import('node:path');
    const served = new Map((await loadRoutes()).map((r) => [r.file, r.methods]));
    const missing: string[] = [];
    for (const f of findRouteFiles().filter((f) => served.get(f.file)!.size > 0)) {
      const mod = (await import(path.join(root, f.file))) as Record<string, (req: Request) => Promise<Response>>;
      for (const m of [...HTTP_METHODS, 'OPTIONS']) {
        if (served.get(f.file)!.has(m.toLowerCase())) continue;
        const res = typeof mod[m] === 'function' ? await mod[m](new Request(`http://test${f.path}`, { method: m })) : null;
        const ok = m === 'OPTIONS' ? res?.status === 204 && !!res.headers.get('allow') : res?.status === 405 && (await res.json()).error?.code === 'method_not_allowed';
        if (!ok) missing.push(`${m} ${f.path}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  test('every GET refuses a query parameter it does not take (400), so a filter it ignores is never silently dropped', async () => {
    const { loadRoutes } = await import('../../test/api-routes');
    const wrong: string[] = [];
    for (const r of await loadRoutes()) {
      const get = r.methods.get('get');
      if (!get || r.path.includes('{')) continue; // a path parameter: the route's own tests
      if (r.path === '/api/health') continue; // probes may add a cache-buster: ignored there (below)
      const required: Record<string, string> = { '/api/cron': 'cron=*+*+*+*+*&', '/api/jobs/lookup': 'ids=1&', '/api/jobs/newer': 'after=1&', '/api/stats/history': 'range=24h&' };
      const res = await get(new Request(`http://test${r.path}?${required[r.path] ?? ''}zz_unknown=1`), { params: Promise.resolve({}) });
      const body = res.status === 400 ? await res.json() : null;
      if (!body || !/zz_unknown/.test(body.error?.message ?? '')) wrong.push(`GET ${r.path}: ${res.status}`);
    }
    assert.deepEqual(wrong, []);
    const health = (await import('./health/route')).GET;
    assert.equal((await health(new Request('http://test/api/health?ready'))).status, 200, 'health takes ready');
    assert.equal((await health(new Request('http://test/api/health?ts=1'))).status, 200, 'and ignores a cache-buster');
  });

  test('every POST refuses a query parameter (400) and changes nothing: its options are in its body', async () => {
    const { loadRoutes } = await import('../../test/api-routes');
    const tables = ['jobs', 'job_attempts', 'audit_log', 'queues', 'users', 'api_tokens', 'sessions', 'schedules', 'setup_tokens'];
    const snapshot = async () => {
      const out: Record<string, unknown> = {};
      for (const t of tables) out[t] = (await db.pool.query(`SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) AS h FROM ${t} x`)).rows[0].h;
      return out;
    };
    const id = await insertJob(db.pool, { status: 'failed', queue: 'post-query' });
    const before = await snapshot();
    const wrong: string[] = [];
    const pathParams = { id, name: 'post-query', action: 'requeue' };
    for (const r of await loadRoutes()) {
      const postHandler = r.methods.get('post');
      if (!postHandler) continue;
      const res = await postHandler(
        new Request(`http://test${r.path}?zz_unknown=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
        { params: Promise.resolve(pathParams) },
      );
      const body = res.status === 400 ? await res.json() : null;
      if (!body || !/zz_unknown/.test(body.error?.message ?? '')) wrong.push(`POST ${r.path}: ${res.status}`);
    }
    assert.deepEqual(wrong, []);
    assert.deepEqual(await snapshot(), before, 'no POST with a query string wrote anything');
  });

  test('POST /api/recover?dryRun=true is refused, not run as a sweep; POST /api/jobs?queue=mail enqueues nothing on default', async () => {
    const id = await insertJob(db.pool, { status: 'running', workerId: 'gone', leaseInMs: -3_000 });
    const res = await recover.POST(new Request('http://test/api/recover?dryRun=true', { method: 'POST' }));
    assert.equal(res.status, 400);
    assert.match((await res.json()).error.message, /dryRun: unknown query parameter/);
    assert.equal((await jobRow(db.pool, id)).status, 'running', 'the expired lease is where it was');
    const n = await count();
    const enq = await jobs.POST(
      new Request('http://test/api/jobs?queue=mail', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"demo.noop"}' }),
    );
    assert.equal(enq.status, 400);
    assert.equal(await count(), n);
  });
});
