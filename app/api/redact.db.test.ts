/**
 * LEASEHOLD_REDACT_KEYS through the route handlers, with sign-in on: a viewer reads the keys'
 * values as "[redacted]" wherever a payload reaches it (the lists, a job's page and its live
 * feed, checkpoints, results, schedules, an audit entry's filter) and cannot test them with a
 * payload filter; an operator reads them whole.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { insertJob } from '../../test/factories';
import { uniquePrefix } from '../../test/processes';
import { loadRoutes } from '../../test/api-routes';
import { send } from '../../test/auth/harness';

const db = await testDatabase();
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = uniquePrefix('redact');
process.env.LEASEHOLD_AUTH = 'on';
process.env.LEASEHOLD_REDACT_KEYS = 'password, Token';
const resultsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-redact-results-'));
process.env.LEASEHOLD_RESULTS_DIR = resultsDir;
cleanup(() => fs.rmSync(resultsDir, { recursive: true, force: true }));
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const { userAdd, sessionCreate } = await import('@/lib/auth/store');
const { jobCheckpoint, jobComplete, scheduleUpsert } = await import('@/lib/queue/ops');
const { FsResultStore } = await import('@/lib/results');
const routes = await loadRoutes();

async function session(name: string, role: string) {
  const u = await userAdd(db.pool, { name, role, password: `${name}-password-123` });
  return (await sessionCreate(db.pool, u.id)).id;
}
const viewer = await session('vic', 'viewer');
const operator = await session('opal', 'operator');

const get = async (cookie: string, p: string, s: { params?: Record<string, string>; query?: string } = {}) => {
  const res = await send(routes, 'GET', p, { cookie, ...s });
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text() };
};

// A payload with hidden keys at two depths (one spelled in other case), inside an array, and a
// number past 2^53 that must come back as written.
const PAYLOAD_TEXT = '{"to": "a@example.com", "password": "hunter2", "auth": {"TOKEN": "t-123", "scopes": ["mail"]}, "items": [{"token": "t-9", "n": 1}], "big": 9007199254740993}';
const job = await insertJob(db.pool, { status: 'running', workerId: 'w-red', queue: 'red-q', type: 'mail.send' });
await db.pool.query('UPDATE jobs SET payload = $2::jsonb WHERE job_id = $1', [job, PAYLOAD_TEXT]);
await jobCheckpoint(db.pool, { workerId: 'w-red', lease: { jobId: job, attempt: 1 }, name: 'login', value: { session: 's-1', token: 'refresh-7' } });

test('a viewer reads hidden keys as [redacted] in the list, the lookup and the job; an operator reads them whole', async () => {
  const list = await get(viewer, '/api/jobs', { query: 'queue=red-q' });
  assert.equal(list.status, 200);
  const listed = list.body.jobs.find((j: { id: string }) => j.id === job);
  assert.equal(listed.payload.password, '[redacted]');
  assert.equal(listed.payload.auth.TOKEN, '[redacted]');
  assert.deepEqual(listed.payload.auth.scopes, ['mail'], 'the rest as it is');
  assert.deepEqual(listed.payload.items, [{ token: '[redacted]', n: 1 }]);
  assert.equal(listed.payload.to, 'a@example.com');
  assert.equal(listed.checkpoints.login.value.token, '[redacted]');
  assert.equal(listed.checkpoints.login.value.session, 's-1');

  const lookup = await get(viewer, '/api/jobs/lookup', { query: `ids=${job}` });
  assert.equal(lookup.body.jobs[0].payload.password, '[redacted]');

  const detail = await get(viewer, '/api/jobs/{id}', { params: { id: job } });
  assert.equal(detail.body.job.payload.password, '[redacted]');
  assert.equal(detail.body.job.checkpoints.login.value.token, '[redacted]');
  assert.ok(!detail.body.payloadText.includes('hunter2') && !detail.body.payloadText.includes('t-123') && !detail.body.payloadText.includes('t-9'));
  assert.match(detail.body.payloadText, /"big": 9007199254740993/, 'every other number as written');
  assert.equal(JSON.stringify(detail.body).includes('hunter2'), false);

  const whole = await get(operator, '/api/jobs/{id}', { params: { id: job } });
  assert.equal(whole.body.job.payload.password, 'hunter2');
  assert.ok(whole.body.payloadText.includes('"hunter2"') && whole.body.payloadText.includes('9007199254740993'), 'the database text, untouched');
  assert.equal((await get(operator, '/api/jobs', { query: 'queue=red-q' })).body.jobs.find((j: { id: string }) => j.id === job).payload.auth.TOKEN, 't-123');
});

test("a viewer's live feed carries the redacted rows", async () => {
  const ac = new AbortController();
  const res = await send(routes, 'GET', '/api/live', { cookie: viewer, query: `ids=${job}&job=${job}&every=1000`, signal: ac.signal });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  let text = '';
  while (!(text.includes('event: lookup') && text.includes('event: job'))) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  ac.abort();
  await reader.cancel().catch(() => {});
  assert.ok(text.includes('[redacted]'), 'the checkpoint token and the payload, redacted');
  for (const secret of ['hunter2', 't-123', 'refresh-7']) assert.equal(text.includes(secret), false, `${secret} not in the feed`);
});

test('a viewer may not filter by a hidden key\'s value (403, with why); by its presence, or by another key, it may', async () => {
  for (const [p, extra] of [['/api/jobs', ''], ['/api/live', '&after=1']]) {
    const res = await send(routes, 'GET', p!, { cookie: viewer, query: `queue=red-q&payload=${encodeURIComponent('password=hunter2')}${extra}` });
    assert.equal(res.status, 403, p);
    const body = await res.json();
    assert.equal(body.error.code, 'forbidden');
    assert.match(body.error.message, /hidden from viewers/);
  }
  const nested = await send(routes, 'GET', '/api/jobs/newer', { cookie: viewer, query: `after=1&payload=${encodeURIComponent('auth.token=t-123')}` });
  assert.equal(nested.status, 403, 'a hidden key anywhere on the path, in any case');
  assert.equal((await get(viewer, '/api/jobs', { query: 'queue=red-q&payload=password' })).status, 200);
  // Nor what a hidden key holds, by the presence of a key in it: each guess would tell.
  const inside = await send(routes, 'GET', '/api/jobs', { cookie: viewer, query: `queue=red-q&payload=${encodeURIComponent('auth.token.refresh')}` });
  assert.equal(inside.status, 403, 'a key inside a hidden one');
  assert.match((await inside.json()).error.message, /"token" is hidden from viewers .*what it holds cannot be filtered on; filter by its presence \(payload=auth\.token\)/);
  assert.equal((await get(viewer, '/api/jobs', { query: `queue=red-q&payload=${encodeURIComponent('auth.token')}` })).status, 200, 'its presence, under a key that is not hidden');
  assert.equal((await get(viewer, '/api/jobs', { query: `queue=red-q&payload=${encodeURIComponent('to=a@example.com')}` })).body.jobs.length, 1);
  assert.equal((await get(operator, '/api/jobs', { query: `queue=red-q&payload=${encodeURIComponent('password=hunter2')}` })).body.jobs.length, 1, 'an operator may');
});

test('results and schedules are redacted for a viewer; an audit entry keeps the key, not the value tested', async () => {
  const store = new FsResultStore(resultsDir);
  const key = await store.put(job, 1, Buffer.from(JSON.stringify({ sent: 1, token: 'res-tok' })));
  assert.equal((await jobComplete(db.pool, { workerId: 'w-red', items: [{ jobId: job, attempt: 1, resultKey: key }] })).size, 1);
  const result = await get(viewer, '/api/jobs/{id}/result', { params: { id: job } });
  assert.deepEqual(result.body, { sent: 1, token: '[redacted]' });
  assert.deepEqual((await get(operator, '/api/jobs/{id}/result', { params: { id: job } })).body, { sent: 1, token: 'res-tok' });

  await scheduleUpsert(db.pool, { name: 'red-nightly', cron: '0 3 * * *', type: 'demo.noop', payload: { password: 'sched-pw', day: 1 } });
  const schedules = await get(viewer, '/api/schedules');
  assert.deepEqual(schedules.body.schedules.find((s: { name: string }) => s.name === 'red-nightly').payload, { password: '[redacted]', day: 1 });

  const bulk = await send(routes, 'POST', '/api/actions/{action}', { cookie: operator, params: { action: 'requeue' }, body: { filter: { status: 'completed', queue: 'red-q', payload: 'password=hunter2' }, reason: 'again' } });
  assert.ok(bulk.status < 500, `the bulk action answered ${bulk.status}`);
  const audit = await get(viewer, '/api/audit');
  const entry = audit.body.entries.find((e: { target: { filter?: { payload?: string } } }) => e.target.filter?.payload?.startsWith('password'));
  assert.ok(entry, 'the bulk action is on the audit log');
  assert.equal(entry.target.filter.payload, 'password=[redacted]');
  const asOperator = (await get(operator, '/api/audit')).body.entries.find((e: { id: string }) => e.id === entry.id);
  assert.equal(asOperator.target.filter.payload, 'password=hunter2');
  // A key named inside a hidden one is data too: cut at the hidden key.
  const inside = await send(routes, 'POST', '/api/actions/{action}', { cookie: operator, params: { action: 'requeue' }, body: { filter: { status: 'completed', queue: 'red-q', payload: 'auth.token.sk_live_1' }, reason: 'inside' } });
  assert.ok(inside.status < 500, `the bulk action answered ${inside.status}`);
  const insideEntry = (await get(viewer, '/api/audit')).body.entries.find((e: { reason: string | null }) => e.reason === 'inside');
  assert.equal(insideEntry.target.filter.payload, 'auth.token.[redacted]');
});

test('a result nested deeper than the display parser goes is still redacted for a viewer (not served whole)', async () => {
  const store = new FsResultStore(resultsDir);
  const deepJob = await insertJob(db.pool, { status: 'running', workerId: 'w-deep', queue: 'red-q', type: 'mail.send' });
  // A tree 250 levels deep (a handler's result has no depth limit: JSON.stringify takes it).
  let tree: unknown = { leaf: true };
  for (let k = 0; k < 250; k++) tree = { child: tree };
  const key = await store.put(deepJob, 1, Buffer.from(JSON.stringify({ token: 'deep-secret', tree })));
  assert.equal((await jobComplete(db.pool, { workerId: 'w-deep', items: [{ jobId: deepJob, attempt: 1, resultKey: key }] })).size, 1);
  const res = await send(routes, 'GET', '/api/jobs/{id}/result', { cookie: viewer, params: { id: deepJob } });
  const text = await res.text();
  assert.equal(text.includes('deep-secret'), false, `a viewer read the hidden token (status ${res.status})`);
});
