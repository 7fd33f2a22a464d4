/**
 * OpenAPI conformance: the document at /api/openapi.json describes every route handler
 * under app/api (and nothing else), is a valid OpenAPI 3.1 document, and every route,
 * called with real Requests against a real database, answers with a status the document
 * lists and a body its schema accepts (ajv, JSON Schema 2020-12).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { validate as validateOpenApi, compileErrors } from '@readme/openapi-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { SseReader } from '../../test/sse';
import { waitFor } from '../../test/wait';
import { findRouteFiles, loadRoutes, undocumented, unimplemented } from '../../test/api-routes';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { insertJob, jobRow } from '../../test/factories';
import { uniquePrefix } from '../../test/processes';

const db = await testDatabase();
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = uniquePrefix('openapi');
const resultsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-openapi-results-'));
process.env.LEASEHOLD_RESULTS_DIR = resultsDir;
cleanup(() => fs.rmSync(resultsDir, { recursive: true, force: true }));
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const { buildOpenApiDocument } = await import('@/lib/http/openapi/document');
const { apiRoutes } = await import('@/lib/http/openapi/routes');
const { jobCheckpoint, jobComplete, scheduleUpsert, workerHeartbeat, workerRegister } = await import('@/lib/queue/ops');
const { FsResultStore } = await import('@/lib/results');

const routes = await loadRoutes();
type Doc = { paths: Record<string, Record<string, Operation>> };
type Operation = {
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
};

const served = await routes.find((r) => r.path === '/api/openapi.json')!.methods.get('get')!(new Request('http://test/api/openapi.json'), {
  params: Promise.resolve({}),
});
const doc = (await served.json()) as Doc;

const DOC_ID = 'https://leasehold.invalid/openapi.json';
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema(doc as object, DOC_ID);
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const validators = new Map<string, ValidateFunction>();
function validatorAt(...parts: string[]): ValidateFunction {
  const ref = `${DOC_ID}#/${pointer(...parts)}`;
  let v = validators.get(ref);
  if (!v) {
    v = ajv.compile({ $ref: ref });
    validators.set(ref, v);
  }
  return v;
}

/** Operations called, and the statuses seen per operation. */
const seen = new Map<string, Set<string>>();

interface Call {
  params?: Record<string, string>;
  query?: string;
  body?: unknown;
  /** A raw body (bad JSON), sent as is and not checked against the request schema. */
  raw?: string;
  headers?: Record<string, string>;
}

/** The live feed's events carry the bodies of these routes (GET /api/live's description). */
const EVENT_BODIES: Record<string, string> = { stats: '/api/stats', lookup: '/api/jobs/lookup', newer: '/api/jobs/newer' };

/** The first events of a live feed, each checked against the schema of the route whose body it carries. */
async function checkEvents(res: Response) {
  const sse = new SseReader(res.body!);
  const events: Record<string, unknown> = {};
  try {
    for (let e = await sse.next(); e && !(e.event in events); e = await sse.next()) {
      const source = EVENT_BODIES[e.event];
      assert.ok(source, `an undocumented event: ${e.event} ${e.data.slice(0, 200)}`);
      const v = validatorAt('paths', source, 'get', 'responses', '200', 'content', 'application/json', 'schema');
      const data = JSON.parse(e.data);
      assert.ok(v(data), `GET /api/live event ${e.event} breaks the schema of ${source}: ${ajv.errorsText(v.errors)}`);
      events[e.event] = data;
    }
  } finally {
    await sse.cancel();
  }
  return events;
}

/** Calls the route handler for `method path` and checks the answer against the document. */
async function call(method: string, path: string, c: Call = {}) {
  const m = method.toLowerCase();
  const route = routes.find((r) => r.path === path);
  assert.ok(route, `a route file serves ${path}`);
  const handler = route.methods.get(m);
  assert.ok(handler, `${path} exports ${method}`);
  const url = 'http://test' + path.replace(/\{(\w+)\}/g, (_, k) => c.params?.[k] ?? `{${k}}`) + (c.query ? `?${c.query}` : '');
  const body = c.raw ?? (c.body === undefined ? undefined : JSON.stringify(c.body));
  const res = await handler(new Request(url, { method, body, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...c.headers } }), {
    params: Promise.resolve(c.params ?? {}),
  });
  const status = String(res.status);
  const op = doc.paths[path]?.[m];
  assert.ok(op, `${method} ${path} is in the document`);
  assert.ok(op.responses[status], `${method} ${path} answered ${status}, which the document does not list (${Object.keys(op.responses).join(', ')})`);
  const key = `${m} ${path}`;
  if (!seen.has(key)) seen.set(key, new Set());
  seen.get(key)!.add(status);

  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const content = op.responses[status]!.content ?? {};
  assert.ok(content[type], `${method} ${path} ${status}: content type ${type} is not documented (${Object.keys(content).join(', ')})`);
  if (type === 'text/event-stream') return { status: res.status, events: await checkEvents(res) };
  const text = await res.text();
  const parsed = type === 'application/json' ? JSON.parse(text) : text;
  const v = validatorAt('paths', path, m, 'responses', status, 'content', type, 'schema');
  assert.ok(v(parsed), `${method} ${path} ${status}: the body breaks its schema: ${ajv.errorsText(v.errors)}\n${text.slice(0, 500)}`);

  // A request the API accepted must also be one the document accepts.
  if (res.ok && c.body !== undefined && op.requestBody) {
    const rv = validatorAt('paths', path, m, 'requestBody', 'content', 'application/json', 'schema');
    assert.ok(rv(c.body), `${method} ${path}: an accepted request breaks the documented request schema: ${ajv.errorsText(rv.errors)}`);
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: parsed as any };
}

describe('the document', () => {
  test('is a valid OpenAPI 3.1 document', async () => {
    assert.equal((doc as { openapi?: string }).openapi, '3.1.0');
    const result = await validateOpenApi(structuredClone(doc) as never);
    assert.ok(result.valid, compileErrors(result));
  });

  test('describes every route file and method under app/api, and nothing that does not exist', () => {
    assert.ok(findRouteFiles().length >= 10);
    assert.deepEqual(undocumented(routes, doc), [], 'route handlers missing from the OpenAPI registry (lib/http/openapi/routes)');
    assert.deepEqual(unimplemented(routes, doc), [], 'documented operations with no route handler');
  });

  test('numeric query parameters are documented as the integers they are, with their range and default', () => {
    type Param = { name: string; schema: Record<string, unknown> };
    const param = (path: string, name: string) =>
      ((doc.paths[path]!.get as unknown as { parameters: Param[] }).parameters.find((p) => p.name === name)!).schema;
    assert.deepEqual(param('/api/jobs', 'limit'), { type: 'integer', minimum: 1, maximum: 200, default: 50 });
    assert.deepEqual(param('/api/audit', 'limit'), { type: 'integer', minimum: 1, maximum: 200, default: 50 });
    assert.deepEqual({ ...param('/api/live', 'every'), description: undefined }, { type: 'integer', minimum: 1000, maximum: 60000, default: 2000, description: undefined });
  });

  test('the check fails for a route file that the registry does not describe', () => {
    const partial = buildOpenApiDocument(apiRoutes.filter((r) => r.path !== '/api/workers'));
    assert.deepEqual(undocumented(routes, partial as unknown as Doc), ['GET /api/workers']);
  });
});

describe('every route answers as documented', () => {
  test('POST /api/jobs', async () => {
    assert.equal((await call('POST', '/api/jobs', { body: { type: 'demo.sleep', payload: { ms: 5 }, queue: 'oa' } })).status, 202);
    assert.equal((await call('POST', '/api/jobs', { body: { type: 'demo.noop', runAt: '2030-01-01T00:00:00Z', idempotencyKey: 'oa-1' } })).status, 202);
    assert.equal((await call('POST', '/api/jobs', { body: [{ type: 'demo.noop' }, { type: 'demo.noop', maxAttempts: 5 }] })).status, 202);
    assert.equal((await call('POST', '/api/jobs', { raw: '{"type":' })).status, 400);
    assert.equal((await call('POST', '/api/jobs', { body: { type: 'demo.noop', extra: 1 } })).status, 400);
    assert.equal((await call('POST', '/api/jobs', { body: { type: 'no.such' } })).status, 422);
    assert.equal((await call('POST', '/api/jobs', { body: { type: 'demo.noop', payload: { s: 'x'.repeat(1024 * 1024) } } })).status, 413);
  });

  test('GET /api/jobs and /api/jobs/{id}', async () => {
    const running = await insertJob(db.pool, { status: 'running', workerId: 'w-oa', queue: 'oa' });
    const failed = await insertJob(db.pool, { status: 'failed', attemptCount: 1, maxAttempts: 1, queue: 'oa' });
    await db.pool.query(
      `INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, outcome, error, error_stack)
       VALUES ($1, 1, 'w-oa', now() - interval '1 s', 'failed', 'boom', 'Error: boom\n    at x')`,
      [failed],
    );
    const page = await call('GET', '/api/jobs', { query: 'queue=oa&limit=2' });
    assert.equal(page.status, 200);
    assert.ok(page.body.nextCursor);
    assert.equal((await call('GET', '/api/jobs', { query: `status=failed&cursor=${page.body.nextCursor}&q=boom` })).status, 200);
    assert.equal((await call('GET', '/api/jobs', { query: 'limit=0' })).status, 400);
    assert.equal((await call('GET', '/api/jobs/{id}', { params: { id: running } })).body.attempts.length, 1);
    assert.equal((await call('GET', '/api/jobs/{id}', { params: { id: failed } })).body.attempts[0].outcome, 'failed');
    assert.equal((await call('GET', '/api/jobs/{id}', { params: { id: '99999999' } })).status, 404);
    assert.equal((await call('GET', '/api/jobs/{id}', { params: { id: 'abc' } })).status, 404);
  });

  test('POST /api/jobs/{id}/requeue and /cancel', async () => {
    const failed = await insertJob(db.pool, { status: 'failed', attemptCount: 3, maxAttempts: 3 });
    const running = await insertJob(db.pool, { status: 'running', workerId: 'w-oa' });
    const queued = await insertJob(db.pool);
    const done = await insertJob(db.pool, { status: 'completed' });
    assert.equal((await call('POST', '/api/jobs/{id}/requeue', { params: { id: failed }, body: { resetAttempts: true } })).status, 200);
    assert.equal((await call('POST', '/api/jobs/{id}/requeue', { params: { id: running } })).status, 409);
    assert.equal((await call('POST', '/api/jobs/{id}/requeue', { params: { id: running }, body: { revokeLease: true } })).status, 200);
    assert.equal((await call('POST', '/api/jobs/{id}/requeue', { params: { id: '424242424' } })).status, 404);
    assert.equal((await call('POST', '/api/jobs/{id}/requeue', { params: { id: failed }, body: { resetAttempts: 'yes' } })).status, 400);
    assert.equal((await call('POST', '/api/jobs/{id}/cancel', { params: { id: queued }, body: { reason: 'not needed' } })).status, 200);
    assert.equal((await call('POST', '/api/jobs/{id}/cancel', { params: { id: done } })).status, 409);
    assert.equal((await call('POST', '/api/jobs/{id}/cancel', { params: { id: '424242424' } })).status, 404);
    assert.equal((await call('POST', '/api/jobs/{id}/cancel', { params: { id: queued }, body: { nope: 1 } })).status, 400);
  });

  test('POST /api/jobs/{id}/reschedule', async () => {
    const scheduled = await insertJob(db.pool, { runInMs: 3_600_000 });
    const done = await insertJob(db.pool, { status: 'completed' });
    assert.equal((await call('POST', '/api/jobs/{id}/reschedule', { params: { id: scheduled }, body: { runAt: '2099-01-01T00:00:00Z', priority: 4, reason: 'later' } })).status, 200);
    assert.equal((await call('POST', '/api/jobs/{id}/reschedule', { params: { id: done }, body: { priority: 4 } })).status, 409);
    assert.equal((await call('POST', '/api/jobs/{id}/reschedule', { params: { id: scheduled }, body: {} })).status, 400);
    assert.equal((await call('POST', '/api/jobs/{id}/reschedule', { params: { id: '424242424' }, body: { priority: 1 } })).status, 404);
  });

  test('POST /api/jobs/{id}/copy', async () => {
    const failed = await insertJob(db.pool, { status: 'failed', type: 'demo.sleep', payload: { ms: 'x' } });
    assert.equal((await call('POST', '/api/jobs/{id}/copy', { params: { id: failed }, body: { payload: { ms: 1 }, reason: 'mended' } })).status, 202);
    assert.equal((await call('POST', '/api/jobs/{id}/copy', { params: { id: failed } })).status, 400);
    assert.equal((await call('POST', '/api/jobs/{id}/copy', { params: { id: '424242424' } })).status, 404);
  });

  test('singleton keys: POST /api/jobs returns the holder, the job page names it, a requeue or a copy is refused while it is held', async () => {
    const first = await call('POST', '/api/jobs', { body: { type: 'demo.noop', queue: 'oa', singletonKey: 'oa-single' } });
    assert.deepEqual([first.status, first.body.created], [202, true]);
    const again = await call('POST', '/api/jobs', { body: { type: 'demo.noop', payload: { other: 1 }, singletonKey: 'oa-single' } });
    assert.deepEqual([again.status, again.body], [202, { id: first.body.id, created: false, heldBy: 'singletonKey' }]);
    const batch = await call('POST', '/api/jobs', { body: [{ type: 'demo.noop', singletonKey: 'oa-single' }, { type: 'demo.noop', singletonKey: 'oa-other' }] });
    assert.deepEqual(batch.body.jobs.map((j: { id: string; created: boolean }) => [j.id === first.body.id, j.created]), [[true, false], [false, true]]);
    assert.equal((await call('POST', '/api/jobs', { body: { type: 'demo.noop', singletonKey: '' } })).status, 400);

    const dead = await insertJob(db.pool, { status: 'failed', attemptCount: 1, maxAttempts: 1, queue: 'oa' });
    await db.pool.query(`UPDATE jobs SET singleton_key = 'oa-single' WHERE job_id = $1`, [dead]);
    const detail = await call('GET', '/api/jobs/{id}', { params: { id: dead } });
    assert.deepEqual([detail.body.job.singletonKey, detail.body.singletonHolder], ['oa-single', first.body.id]);
    assert.equal((await call('GET', '/api/jobs/{id}', { params: { id: first.body.id } })).body.singletonHolder, undefined, 'the holder itself has none');
    const requeue = await call('POST', '/api/jobs/{id}/requeue', { params: { id: dead } });
    assert.equal(requeue.status, 409);
    assert.match(requeue.body.error.message, new RegExp(`job ${first.body.id} holds its singleton key "oa-single"`));
    const copy = await call('POST', '/api/jobs/{id}/copy', { params: { id: dead } });
    assert.equal(copy.status, 409);
    assert.match(copy.body.error.message, new RegExp(`job ${first.body.id} holds its singleton key "oa-single" \\(it is queued, retrying or running\\): copy this one once that one has finished`));
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE singleton_key = 'oa-single'`);
    assert.equal(rows[0].n, 2, 'the refused copy wrote nothing');
    // An operator's attempt the job's state forbade: logged as skipped, as a refused requeue is.
    const { rows: audit } = await db.pool.query(`SELECT action, changed, skipped, details FROM audit_log WHERE $1 = ANY(job_ids) AND state = 'done' ORDER BY audit_id`, [dead]);
    assert.deepEqual(
      audit.map((a) => [a.action, a.changed, a.skipped, a.details.heldBy ?? null]),
      [
        ['requeue', 0, 1, null],
        ['copy', 0, 1, first.body.id],
      ],
    );

    await db.pool.query(`UPDATE jobs SET status = 'cancelled', finished_at = now() WHERE job_id = $1`, [first.body.id]);
    const copied = await call('POST', '/api/jobs/{id}/copy', { params: { id: dead } });
    assert.equal(copied.status, 202);
    assert.equal((await call('GET', '/api/jobs/{id}', { params: { id: copied.body.id } })).body.job.singletonKey, 'oa-single', 'the copy keeps the key');
  });

  test('POST /api/recover', async () => {
    await insertJob(db.pool, { status: 'running', workerId: 'gone', leaseInMs: -5_000 });
    await insertJob(db.pool, { runInMs: -60_000 }); // due, waiting, never rung
    const preview = await call('POST', '/api/recover', { body: { dryRun: true } });
    assert.ok(preview.body.expired.length >= 1);
    assert.ok((await call('POST', '/api/recover')).body.expired.length >= 1);
    assert.equal((await call('POST', '/api/recover', { body: { dryRun: 'yes' } })).status, 400);
  });

  test('GET /api/jobs: the new filters, and rows cut for lists', async () => {
    // A payload too big for a list (random, so that TOAST compression keeps it over 2 KiB), and a long error.
    const big = await insertJob(db.pool, { status: 'failed', queue: 'oa-list', payload: { blob: randomBytes(6_000).toString('base64') } });
    await db.pool.query(`UPDATE jobs SET error = $2 WHERE job_id = $1`, [big, `Error: ${'x'.repeat(900)}\n    at handler`]);
    const small = await insertJob(db.pool, { status: 'completed', queue: 'oa-list', payload: { account: 42, order: { id: 'o-1' } } });

    const page = await call('GET', '/api/jobs', { query: 'queue=oa-list' });
    assert.deepEqual(page.body.jobs.map((j: { id: string }) => j.id), [small, big]);
    assert.ok(BigInt(page.body.headId) >= BigInt(small));
    assert.equal(page.body.partial, null);
    const cut = page.body.jobs[1];
    assert.equal(cut.payload, null);
    assert.equal(cut.payloadOmitted, true);
    assert.ok(cut.payloadBytes > 2048);
    assert.equal(cut.error.length, 500);
    assert.deepEqual(page.body.jobs[0].payload, { account: 42, order: { id: 'o-1' } });
    assert.equal(page.body.jobs[0].payloadOmitted, false);

    const ids = async (query: string) => (await call('GET', '/api/jobs', { query })).body.jobs.map((j: { id: string }) => j.id);
    assert.deepEqual(await ids(`id=${big}`), [big]);
    assert.deepEqual(await ids('queue=oa-list&error=XXXX'), [big]);
    assert.deepEqual(await ids('queue=oa-list&payload=order.id%3Do-1'), [small]);
    assert.deepEqual(await ids('queue=oa-list&payload=account'), [small]);
    assert.deepEqual(await ids(`queue=oa-list&maxId=${big}`), [big]);
    assert.deepEqual(await ids('queue=oa-list&fingerprint=0123456789ab'), []);
    assert.deepEqual(await ids('q=9223372036854775808'), [], 'a number too big to be a job id is searched as text');
    for (const query of ['fingerprint=xyz', 'payload=a..b', 'id=abc', 'maxId=-1', 'cursor=9223372036854775808', 'id=99999999999999999999', 'nope=1']) {
      assert.equal((await call('GET', '/api/jobs', { query })).status, 400, query);
    }
  });

  test('GET /api/jobs/export as CSV and NDJSON', async () => {
    await insertJob(db.pool, { queue: 'oa-export' });
    const csv = await call('GET', '/api/jobs/export', { query: 'queue=oa-export' });
    assert.equal(csv.status, 200);
    assert.match(csv.body, /^id,status,queue,type,/);
    const nd = await call('GET', '/api/jobs/export', { query: 'queue=oa-export&format=ndjson' });
    assert.match(nd.body, /"export":\{"rows":1,"complete":true/);
    assert.equal((await call('GET', '/api/jobs/export', { query: 'format=xlsx' })).status, 400);
  });

  test('GET /api/jobs/{id} with checkpoints, and GET /api/jobs/{id}/result', async () => {
    const id = await insertJob(db.pool, { status: 'running', workerId: 'w-res', queue: 'oa-res' });
    const lease = { jobId: id, attempt: 1 };
    assert.ok(await jobCheckpoint(db.pool, { workerId: 'w-res', lease, name: 'fetched', value: { page: 3, cursor: 'c-9' } }));
    const running = await call('GET', '/api/jobs/{id}', { params: { id } });
    assert.deepEqual(running.body.job.checkpoints.fetched.value, { page: 3, cursor: 'c-9' });
    assert.equal(running.body.job.checkpoints.fetched.attempt, 1);
    assert.equal(running.body.job.leaseLostStreak, 0);
    assert.equal(running.body.payloadText, '{"ms": 10}');
    assert.equal((await call('GET', '/api/jobs/{id}/result', { params: { id } })).status, 404, 'no result before it completes');

    const store = new FsResultStore(resultsDir);
    const result = { sent: 3, ids: [1, 2, 3], note: 'ünïcödé' };
    const key = await store.put(id, 1, Buffer.from(JSON.stringify(result)));
    assert.equal((await jobComplete(db.pool, { workerId: 'w-res', items: [{ ...lease, resultKey: key }] })).size, 1);
    const r = await call('GET', '/api/jobs/{id}/result', { params: { id } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, result);

    // A completed job without a result, a result missing from the store, no such job, not an id.
    const plain = await insertJob(db.pool, { status: 'completed' });
    assert.equal((await call('GET', '/api/jobs/{id}/result', { params: { id: plain } })).status, 404);
    const lost = await insertJob(db.pool, { status: 'running', workerId: 'w-res' });
    const lostKey = await store.put(lost, 1, Buffer.from('{}'));
    await jobComplete(db.pool, { workerId: 'w-res', items: [{ jobId: lost, attempt: 1, resultKey: lostKey }] });
    await store.delete(lostKey);
    assert.equal((await call('GET', '/api/jobs/{id}/result', { params: { id: lost } })).status, 404);
    assert.equal((await call('GET', '/api/jobs/{id}/result', { params: { id: '99999999' } })).status, 404);
    assert.equal((await call('GET', '/api/jobs/{id}/result', { params: { id: 'abc' } })).status, 404);
  });

  test('POST /api/actions/{action}: previews and applies, on ids, a filter and the whole recover sweep', async () => {
    const action = (name: string, c: Omit<Call, 'params'>) => call('POST', '/api/actions/{action}', { params: { action: name }, ...c });

    // requeue on ids: the preview writes nothing and says per job what would happen; the action then does it.
    const failed = await insertJob(db.pool, { status: 'failed', queue: 'oa-act', attemptCount: 3, maxAttempts: 3 });
    const running = await insertJob(db.pool, { status: 'running', queue: 'oa-act', workerId: 'w-act', leaseInMs: 30_000 });
    const pre = await action('requeue', { body: { ids: [failed, running, '999999999'], preview: true, resetAttempts: true } });
    assert.equal(pre.status, 200);
    assert.equal(pre.body.preview, true);
    assert.deepEqual([pre.body.total, pre.body.changed, pre.body.skipped], [3, 1, 2]);
    assert.deepEqual(pre.body.byStatus, { failed: 1, running: 1 });
    assert.deepEqual(pre.body.byOutcome, { requeued: 1, skipped: 1, not_found: 1 });
    assert.equal(pre.body.items.find((i: { id: string }) => i.id === failed).outcome, 'would_change');
    assert.equal((await jobRow(db.pool, failed)).status, 'failed', 'a preview writes nothing');
    const done = await action('requeue', { body: { ids: [failed, running], resetAttempts: true } });
    assert.deepEqual([done.body.preview, done.body.changed, done.body.skipped], [false, 1, 1]);
    assert.equal(done.body.items[0].id, running, 'skips first');
    assert.match(done.body.reasons[0].reason, /lease still held by w-act/);
    assert.equal((await jobRow(db.pool, failed)).status, 'queued');

    // cancel on ids
    const cancelled = await action('cancel', { body: { ids: [failed] } });
    assert.equal(cancelled.body.items[0].outcome, 'cancelled');

    // delete every job matching a filter, pinned by the preview's maxId
    const a = await insertJob(db.pool, { status: 'failed', queue: 'oa-del' });
    const b = await insertJob(db.pool, { status: 'failed', queue: 'oa-del' });
    const fpre = await action('delete', { body: { filter: { status: 'failed', queue: 'oa-del' }, preview: true } });
    assert.deepEqual([fpre.body.total, fpre.body.changed], [2, 2]);
    assert.ok(fpre.body.maxId);
    const late = await insertJob(db.pool, { status: 'failed', queue: 'oa-del' });
    const fdone = await action('delete', { body: { filter: { status: 'failed', queue: 'oa-del', maxId: fpre.body.maxId } } });
    assert.equal(fdone.body.changed, 2);
    assert.equal(fdone.body.maxId, fpre.body.maxId);
    assert.equal(await jobRow(db.pool, a), undefined);
    assert.equal(await jobRow(db.pool, b), undefined);
    assert.equal((await jobRow(db.pool, late)).status, 'failed', 'a job created after the preview is not touched');

    // recover: a selection, then the whole sweep (preview, then apply with the ids the preview listed)
    const expired = await insertJob(db.pool, { status: 'running', workerId: 'w-gone', leaseInMs: -5_000 });
    const rpre = await action('recover', { body: { ids: [expired, running], preview: true } });
    assert.deepEqual([rpre.body.changed, rpre.body.skipped], [1, 1]);
    const sweep = await action('recover', { body: { all: true, preview: true } });
    assert.ok(sweep.body.items.some((i: { id: string }) => i.id === expired));
    assert.ok(Array.isArray(sweep.body.resignal) && Array.isArray(sweep.body.resignalQueues));
    const swept = await action('recover', { body: { all: true, expectIds: [expired, running] } });
    assert.ok(swept.body.items.some((i: { id: string; outcome: string }) => i.id === expired && i.outcome === 'recovered'));
    assert.ok(swept.body.items.some((i: { id: string; outcome: string }) => i.id === running && i.outcome === 'skipped'));
    const after = await call('GET', '/api/jobs/{id}', { params: { id: expired } });
    assert.equal(after.body.job.status, 'retrying');
    assert.equal(after.body.job.leaseLostStreak, 1);

    // Refused: nothing written.
    assert.equal((await action('explode', { body: { ids: ['1'] } })).status, 404);
    assert.equal((await action('requeue', { body: {} })).status, 400);
    assert.equal((await action('requeue', { body: { ids: [failed], filter: { status: 'failed' } } })).status, 400);
    assert.equal((await action('delete', { body: { filter: {} } })).status, 400);
    assert.equal((await action('delete', { body: { filter: { maxId: late } } })).status, 400);
    assert.equal((await action('delete', { body: { all: true } })).status, 400);
    assert.equal((await action('cancel', { body: { ids: ['9223372036854775808'] } })).status, 400);
    assert.equal((await action('requeue', { body: { filter: { fingerprint: 'xyz' } } })).status, 400);
    assert.equal((await action('requeue', { body: { ids: [failed], force: true } })).status, 400);
    assert.equal((await action('requeue', { raw: '{"ids": [' })).status, 400);
    assert.equal((await action('requeue', { raw: '' })).status, 400);
    assert.equal((await action('cancel', { raw: JSON.stringify({ ids: [late], reason: 'x'.repeat(300 * 1024) }) })).status, 413);
    assert.equal((await jobRow(db.pool, late)).status, 'failed');
  });

  test('GET /api/jobs/lookup and /api/jobs/newer', async () => {
    const x = await insertJob(db.pool, { queue: 'oa-look' });
    const y = await insertJob(db.pool, { queue: 'oa-look', status: 'running', workerId: 'w-look' });
    const r = await call('GET', '/api/jobs/lookup', { query: `ids=${x},${y},999999999` });
    assert.deepEqual(r.body.jobs.map((j: { id: string }) => j.id), [y, x]);
    assert.equal((await call('GET', '/api/jobs/lookup', { query: 'ids=' })).body.jobs.length, 0);
    for (const query of [`ids=${Array.from({ length: 201 }, (_, i) => i + 1).join(',')}`, 'ids=1,abc', 'ids=9223372036854775808', '', `ids=${x}&queue=q`]) {
      assert.equal((await call('GET', '/api/jobs/lookup', { query })).status, 400, query);
    }

    assert.deepEqual((await call('GET', '/api/jobs/newer', { query: `queue=oa-look&after=${x}` })).body, { count: 1, capped: false });
    const live = await call('GET', '/api/live', { query: `stats=1&ids=${x},${y}&queue=oa-look&after=${x}&every=1000` });
    assert.deepEqual(Object.keys(live.events!).sort(), ['lookup', 'newer', 'stats']);
    assert.deepEqual(live.events!.newer, { count: 1, capped: false });
    for (const query of ['', `ids=${x}&queue=oa-look`, 'stats=1&every=999', 'stats=1&cursor=1']) {
      assert.equal((await call('GET', '/api/live', { query })).status, 400, query);
    }
    assert.deepEqual((await call('GET', '/api/jobs/newer', { query: `status=running&worker=w-look&after=${x}` })).body, { count: 1, capped: false });
    for (const query of ['queue=oa-look', 'after=abc', `after=${x}&fingerprint=xyz`, 'after=9223372036854775808', `after=${x}&cursor=1`]) {
      assert.equal((await call('GET', '/api/jobs/newer', { query })).status, 400, query);
    }
  });

  test('GET /api/dead-letter (its fingerprint filters the list) and GET /api/console', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await insertJob(db.pool, { status: 'failed', type: 'demo.noop', queue: 'oa-dl' });
      await db.pool.query(`UPDATE jobs SET error = $2 WHERE job_id = $1`, [id, `SMTP 421: mailbox busy for user${i}@example.com\n    at send`]);
      ids.push(id);
    }
    const d = await call('GET', '/api/dead-letter');
    const g = d.body.groups.find((x: { pattern: string }) => x.pattern.startsWith('SMTP # mailbox busy for #'));
    assert.ok(g, JSON.stringify(d.body.groups));
    assert.equal(g.count, 3);
    assert.equal(g.sampleJobId, ids[2]);
    assert.equal(d.body.complete, true);
    const listed = await call('GET', '/api/jobs', { query: `status=failed&type=demo.noop&fingerprint=${g.fingerprint}` });
    assert.deepEqual(listed.body.jobs.map((j: { id: string }) => j.id), [...ids].reverse());

    const meta = await call('GET', '/api/console');
    assert.equal(meta.body.environment, null);
    assert.equal(meta.body.redisPrefix, process.env.LEASEHOLD_REDIS_PREFIX);
  });

  test("GET /api/cron: an expression's next ticks as its schedule runs them; a 400 that says what is wrong", async () => {
    const q = (o: Record<string, string>) => new URLSearchParams(o).toString();
    const daily = await call('GET', '/api/cron', { query: q({ cron: '30 4 * * *', timezone: 'Asia/Kolkata', count: '3' }) });
    assert.equal(daily.status, 200);
    assert.equal(daily.body.ticks.length, 3);
    // 04:30 in Kolkata is 23:00 UTC the day before, a day apart, all after the database's now.
    for (const [k, t] of daily.body.ticks.entries()) {
      assert.match(t, /T23:00:00\.000Z$/);
      assert.ok(Date.parse(t) > Date.parse(daily.body.dbNow));
      if (k) assert.equal(Date.parse(t) - Date.parse(daily.body.ticks[k - 1]), 86_400_000);
    }
    // An H stands for what it stands for in the schedule of that name.
    await scheduleUpsert(db.pool, { name: 'oa-hashed', cron: 'H H * * *', type: 'demo.noop' });
    const [defined] = (await db.pool.query(`SELECT next_run_at FROM schedules WHERE name = 'oa-hashed'`)).rows;
    const hashed = await call('GET', '/api/cron', { query: q({ cron: 'H H * * *', name: 'oa-hashed', count: '1' }) });
    assert.deepEqual(hashed.body.ticks, [defined.next_run_at.toISOString()]);
    await db.pool.query(`DELETE FROM schedules WHERE name = 'oa-hashed'`); // the schedules test below lists them
    for (const [query, why] of [
      [q({ cron: 'every hour' }), /cron "every hour" \(UTC\)/],
      [q({ cron: '0 3 * * *', timezone: 'Mars/Olympus' }), /not a time zone name/],
      [q({ cron: '30 4 1' }), /3 fields: five are needed/],
      [q({ cron: '* * * * *', count: '11' }), /count/],
      [q({ cron: 'H H * * *' }), /an H stands for a value the schedule's name fixes: give name/],
      [q({ cron: '0 3 * * *', name: 'x'.repeat(201) }), /name/],
      [q({ timezone: 'UTC' }), /cron/],
    ] as const) {
      const res = await call('GET', '/api/cron', { query });
      assert.equal(res.status, 400, query);
      assert.match(res.body.error.message, why);
    }
  });

  test('GET /api/queues, POST /api/queues/{name}, GET /api/schedules', async () => {
    const set = await call('POST', '/api/queues/{name}', { params: { name: 'oa-ctl' }, body: { paused: true, concurrencyLimit: 2 } });
    assert.equal(set.status, 200);
    assert.deepEqual([set.body.controls.paused, set.body.controls.concurrencyLimit], [true, 2]);
    const rate = await call('POST', '/api/queues/{name}', { params: { name: 'oa-ctl' }, body: { rateLimit: 5, ratePeriodMs: 1000 } });
    assert.equal(rate.body.controls.rateTokens, 5);
    assert.ok((await call('GET', '/api/queues')).body.queues.some((q: { name: string }) => q.name === 'oa-ctl'));
    const cleared = await call('POST', '/api/queues/{name}', { params: { name: 'oa-ctl' }, body: { paused: false, concurrencyLimit: 0, rateLimit: 0 } });
    assert.equal(cleared.body.controls, null);
    for (const body of [{}, { rateLimit: 3 }, { paused: 'yes' }, { concurrencyLimit: -1 }, { nope: 1 }]) {
      assert.equal((await call('POST', '/api/queues/{name}', { params: { name: 'oa-ctl' }, body })).status, 400, JSON.stringify(body));
    }
    await scheduleUpsert(db.pool, { name: 'oa-nightly', cron: '0 3 * * *', type: 'demo.noop' });
    const sch = await call('GET', '/api/schedules');
    assert.equal(sch.body.schedules[0].name, 'oa-nightly');
    const run = await call('POST', '/api/schedules/{name}/run', { params: { name: 'oa-nightly' }, body: { reason: 'by hand' } });
    assert.deepEqual([run.status, run.body.created], [202, true]);
    assert.equal((await call('POST', '/api/schedules/{name}/pause', { params: { name: 'oa-nightly' } })).body.schedule.paused, true);
    assert.equal((await call('POST', '/api/schedules/{name}/resume', { params: { name: 'oa-nightly' }, body: {} })).body.changed, true);
    for (const verb of ['run', 'pause', 'resume']) {
      assert.equal((await call('POST', `/api/schedules/{name}/${verb}`, { params: { name: 'oa-none' } })).status, 404);
      assert.equal((await call('POST', `/api/schedules/{name}/${verb}`, { params: { name: 'oa-nightly' }, body: { nope: 1 } })).status, 400);
    }
    // Defined and removed through the API, as the console's Schedules page does.
    const defined = await call('PUT', '/api/schedules/{name}', { params: { name: 'oa-hourly' }, body: { cron: '15 * * * *', type: 'demo.sleep', payload: { ms: 5 }, priority: 3, reason: 'new' } });
    assert.equal(defined.status, 200);
    assert.deepEqual([defined.body.schedule.cron, defined.body.schedule.priority, defined.body.schedule.maxAttempts], ['15 * * * *', 3, 3]);
    for (const body of [{ cron: 'every hour', type: 'demo.noop' }, { cron: '0 3 * * *', timezone: 'Mars/Olympus', type: 'demo.noop' }, { cron: '0 3 * * *', type: 'demo.sleep', payload: { ms: 'x' } }, { type: 'demo.noop' }, { cron: '0 3 * * *', type: 'demo.noop', enabled: false }]) {
      assert.equal((await call('PUT', '/api/schedules/{name}', { params: { name: 'oa-hourly' }, body })).status, 400, JSON.stringify(body));
    }
    assert.equal((await call('PUT', '/api/schedules/{name}', { params: { name: 'oa-hourly' }, body: { cron: '0 3 * * *', type: 'no.such.type' } })).status, 422);
    assert.equal((await call('PUT', '/api/schedules/{name}', { params: { name: 'x'.repeat(201) }, body: { cron: '0 3 * * *', type: 'demo.noop' } })).status, 400);
    assert.equal((await call('GET', '/api/schedules')).body.schedules.find((x: { name: string }) => x.name === 'oa-hourly').payload.ms, 5, 'the refused redefinitions changed nothing');
    // The console's New schedule: a name already taken is refused, not redefined.
    const taken = await call('PUT', '/api/schedules/{name}', { params: { name: 'oa-hourly' }, headers: { 'if-none-match': '*' }, body: { cron: '0 0 * * *', type: 'demo.noop' } });
    assert.equal(taken.status, 409);
    assert.match(taken.body.error.message, /a schedule named "oa-hourly" exists already/);
    assert.equal((await call('PUT', '/api/schedules/{name}', { params: { name: 'oa-new' }, headers: { 'if-none-match': '*' }, body: { cron: '0 0 * * *', type: 'demo.noop' } })).status, 200);
    // A disabled schedule redefined from the console stays disabled (the definition's switch is the code's).
    await db.pool.query(`UPDATE schedules SET enabled = false WHERE name = 'oa-hourly'`);
    assert.equal((await call('PUT', '/api/schedules/{name}', { params: { name: 'oa-hourly' }, body: { cron: '45 * * * *', type: 'demo.noop' } })).body.schedule.enabled, false);
    await db.pool.query(`DELETE FROM schedules WHERE name = 'oa-new'`);
    // One run at a time: a Run now while its run is unfinished answers that run.
    const single = await call('PUT', '/api/schedules/{name}', { params: { name: 'oa-single' }, body: { cron: '0 0 1 1 *', type: 'demo.noop', queue: 'oa-single', overlap: 'skip' } });
    assert.deepEqual([single.status, single.body.schedule.overlap, single.body.schedule.lastSkippedAt], [200, 'skip', null]);
    assert.equal((await call('PUT', '/api/schedules/{name}', { params: { name: 'oa-single' }, body: { cron: '0 0 1 1 *', type: 'demo.noop', overlap: 'sometimes' } })).status, 400);
    const ran = await call('POST', '/api/schedules/{name}/run', { params: { name: 'oa-single' } });
    assert.equal(ran.body.created, true);
    await db.pool.query(`UPDATE jobs SET idempotency_key = NULL WHERE job_id = $1`, [ran.body.id]); // not the same click: a later one
    const again = await call('POST', '/api/schedules/{name}/run', { params: { name: 'oa-single' } });
    assert.deepEqual(again.body, { schedule: 'oa-single', id: ran.body.id, queue: 'oa-single', created: false, overlapping: true });
    await db.pool.query(`DELETE FROM schedules WHERE name = 'oa-single'`);
    assert.deepEqual((await call('DELETE', '/api/schedules/{name}', { params: { name: 'oa-hourly' }, body: { reason: 'not needed' } })).body, { removed: 'oa-hourly' });
    assert.equal((await call('DELETE', '/api/schedules/{name}', { params: { name: 'oa-hourly' } })).status, 404);
  });

  test('GET /api/stats (estimates past the count cap), /api/workers, /api/health, /api/metrics, /api/openapi.json', async () => {
    // Past the count cap a status's count is an estimate from the table statistics.
    await db.pool.query(
      `INSERT INTO jobs (queue, type, status, attempt_count, started_at, finished_at)
       SELECT 'oa-bulk', 'demo.noop', 'completed', 1, now(), now() FROM generate_series(1, 50001)`,
    );
    await db.pool.query('ANALYZE jobs');
    // The shared snapshot may predate the insert (the live feed's test read it): wait for a newer one.
    const stats = await waitFor('a stats snapshot that counts the insert', async () => {
      const s = await call('GET', '/api/stats');
      return s.body.estimates.liveRows > 50_000 && s;
    });
    assert.equal(stats.status, 200);
    assert.equal(stats.body.kinds.completed, 'estimate');
    assert.equal(stats.body.totalKind, 'estimate');
    assert.ok(stats.body.estimates.analyzedAt && stats.body.estimates.liveRows > 50_000);
    assert.equal(stats.body.kinds.running, 'exact');
    assert.ok(stats.body.queues.some((q: { queue: string }) => q.queue === 'oa-bulk'));

    const history = await call('GET', '/api/stats/history', { query: 'range=24h' });
    assert.equal(history.status, 200);
    assert.equal(history.body.bucketMs, 300_000);
    assert.equal((await call('GET', '/api/stats/history', { query: 'range=1y' })).status, 400);
    assert.equal((await call('GET', '/api/stats/history')).status, 400);

    await workerRegister(db.pool, { workerId: 'oa-host:1:abc', host: 'oa-host', pid: 1, queues: ['default', 'oa'], concurrency: 4 });
    await workerHeartbeat(db.pool, 'oa-host:1:abc', { claimed: 5, completed: 4, quiet: false });
    await workerRegister(db.pool, { workerId: 'oa-host:2:def', host: 'oa-host', pid: 2, queues: ['oa'], concurrency: 1 });
    await db.pool.query(`UPDATE workers SET heartbeat_at = now() - interval '10 minutes' WHERE worker_id = 'oa-host:2:def'`);
    const workers = (await call('GET', '/api/workers')).body;
    assert.deepEqual(
      workers.workers.map((w: { workerId: string; stale: boolean }) => [w.workerId, w.stale]),
      [
        ['oa-host:1:abc', false],
        ['oa-host:2:def', true],
      ],
    );
    assert.equal(workers.workers[0].metrics.claimed, 5);
    // Quiet and resume: changed, then already so; an unknown worker 404, a stopped one 409.
    const quiet = await call('POST', '/api/workers/{id}/quiet', { params: { id: 'oa-host:1:abc' }, body: { reason: 'host maintenance' } });
    assert.deepEqual(quiet.body, { workerId: 'oa-host:1:abc', quiet: true, changed: true });
    assert.equal((await call('POST', '/api/workers/{id}/quiet', { params: { id: 'oa-host:1:abc' } })).body.changed, false);
    const listed = (await call('GET', '/api/workers')).body.workers.find((w: { workerId: string }) => w.workerId === 'oa-host:1:abc');
    assert.ok(listed.quietAt);
    assert.equal(listed.quietSeen, false, 'the process has not reported it yet');
    assert.equal((await call('POST', '/api/workers/{id}/resume', { params: { id: 'oa-host:1:abc' } })).body.changed, true);
    assert.equal((await call('POST', '/api/workers/{id}/quiet', { params: { id: 'oa-nobody:1:x' } })).status, 404);
    // A process that has not said it reads quiet requests (an earlier version) is not quieted.
    await db.pool.query(`INSERT INTO workers (worker_id, host, pid, queues, concurrency, metrics) VALUES ('oa-host:3:old', 'oa-host', 3, '{oa}', 1, '{"claimed": 1}')`);
    const old = await call('POST', '/api/workers/{id}/quiet', { params: { id: 'oa-host:3:old' } });
    assert.equal(old.status, 409);
    assert.match(old.body.error.message, /does not read quiet requests/);
    await db.pool.query(`UPDATE workers SET stopped_at = now() WHERE worker_id = 'oa-host:2:def'`);
    assert.equal((await call('POST', '/api/workers/{id}/resume', { params: { id: 'oa-host:2:def' } })).status, 409);
    assert.equal((await call('POST', '/api/workers/{id}/quiet', { params: { id: 'oa-host:1:abc' }, body: { nope: 1 } })).status, 400);
    const { rows: entries } = await db.pool.query(`SELECT action, target, reason, changed, skipped FROM audit_log WHERE action LIKE 'worker.%' ORDER BY audit_id`);
    assert.deepEqual(
      entries.map((e) => [e.action, e.target.worker, e.reason, e.changed, e.skipped]),
      [
        ['worker.quiet', 'oa-host:1:abc', 'host maintenance', 1, 0],
        ['worker.quiet', 'oa-host:1:abc', null, 0, 1],
        ['worker.resume', 'oa-host:1:abc', null, 1, 0],
      ],
      'refusals leave no entry',
    );
    assert.deepEqual((await call('GET', '/api/health')).body, { ok: true });
    assert.equal((await call('GET', '/api/health', { query: 'ready' })).body.postgres, 'ok');
    assert.match((await call('GET', '/api/metrics')).body, /leasehold_jobs\{/);
    assert.equal((await call('GET', '/api/openapi.json')).status, 200);
  });
});

describe('access control and the audit log', () => {
  test('first-admin setup, sign-in, me, sign-out and the audit log answer as documented', async () => {
    const { setupTokenCreate } = await import('@/lib/auth/store');
    const token = await setupTokenCreate(db.pool);
    assert.equal((await call('POST', '/api/auth/setup', { body: { token, name: 'oa-admin', password: 'correct horse battery' } })).status, 201);
    assert.equal((await call('POST', '/api/auth/setup', { body: { token, name: 'oa-again', password: 'correct horse battery' } })).status, 403);
    assert.equal((await call('POST', '/api/auth/setup', { body: { token: 'x' } })).status, 400);
    assert.equal((await call('POST', '/api/auth/signin', { body: { name: 'oa-admin', password: 'correct horse battery' } })).status, 200);
    assert.equal((await call('POST', '/api/auth/signin', { body: { name: 'oa-admin', password: 'wrong password' } })).status, 401);
    assert.equal((await call('POST', '/api/auth/signin', { body: { name: 'oa-admin' } })).status, 400);
    assert.equal((await call('GET', '/api/auth/me')).body.authOff, true);
    assert.equal((await call('POST', '/api/auth/signout')).status, 200);
    const page = await call('GET', '/api/audit', { query: 'limit=5' });
    assert.equal(page.status, 200);
    assert.ok(page.body.entries.some((e: { action: string }) => e.action === 'user.setup'));
    assert.equal((await call('GET', '/api/audit', { query: 'jobId=abc' })).status, 400);
  });

  test('users and tokens (admin)', async () => {
    assert.equal((await call('POST', '/api/admin/users', { body: { name: 'oa-viewer', role: 'viewer', password: 'viewer-password-1' } })).status, 201);
    assert.equal((await call('POST', '/api/admin/users', { body: { name: 'oa-viewer', role: 'viewer', password: 'viewer-password-1' } })).status, 409);
    assert.equal((await call('POST', '/api/admin/users', { body: { name: 'oa-x', role: 'root', password: 'viewer-password-1' } })).status, 400);
    assert.ok((await call('GET', '/api/admin/users')).body.users.some((u: { name: string }) => u.name === 'oa-viewer'));
    const promoted = await call('PATCH', '/api/admin/users/{name}', { params: { name: 'oa-viewer' }, body: { role: 'operator' } });
    assert.deepEqual([promoted.status, promoted.body.role, promoted.body.previousRole], [200, 'operator', 'viewer']);
    assert.equal((await call('PATCH', '/api/admin/users/{name}', { params: { name: 'oa-viewer' }, body: { role: 'root' } })).status, 400);
    assert.equal((await call('PATCH', '/api/admin/users/{name}', { params: { name: 'nobody-here' }, body: { role: 'viewer' } })).status, 404);
    assert.equal((await call('PATCH', '/api/admin/users/{name}', { params: { name: 'oa-admin' }, body: { role: 'viewer' } })).status, 409);
    assert.equal((await call('POST', '/api/admin/users/{name}/disable', { params: { name: 'oa-viewer' } })).status, 200);
    assert.equal((await call('POST', '/api/admin/users/{name}/disable', { params: { name: 'oa-viewer' } })).status, 404);
    const created = await call('POST', '/api/admin/tokens', { body: { name: 'oa-producer', scope: 'enqueue' } });
    assert.equal(created.status, 201);
    assert.match(created.body.token, /^lh_/);
    assert.equal((await call('POST', '/api/admin/tokens', { body: { name: 'oa-producer', scope: 'root' } })).status, 400);
    assert.equal((await call('POST', '/api/admin/tokens', { body: { name: '3', scope: 'viewer' } })).status, 400, 'a name that reads as a token id');
    assert.ok((await call('GET', '/api/admin/tokens')).body.tokens.every((t: Record<string, unknown>) => !('token' in t)));
    assert.equal((await call('POST', '/api/admin/tokens/{id}/revoke', { params: { id: created.body.id } })).status, 200);
    assert.equal((await call('POST', '/api/admin/tokens/{id}/revoke', { params: { id: created.body.id } })).status, 404);
  });
});

describe('saved views', () => {
  test('GET /api/views, POST /api/views, DELETE /api/views/{id}', async () => {
    const saved = await call('POST', '/api/views', { body: { name: 'oa failed', page: 'jobs', query: 'queue=oa&status=failed' } });
    assert.deepEqual([saved.status, saved.body.query, saved.body.createdBy], [201, 'status=failed&queue=oa', null]);
    assert.equal((await call('POST', '/api/views', { body: { name: 'OA FAILED', page: 'jobs', query: '' } })).status, 409);
    assert.equal((await call('POST', '/api/views', { body: { name: 'oa bad', page: 'jobs', query: 'nope=1' } })).status, 400);
    assert.equal((await call('POST', '/api/views', { raw: JSON.stringify({ name: 'oa big', page: 'jobs', query: 'x'.repeat(10_000) }) })).status, 413);
    const listed = await call('GET', '/api/views', { query: 'page=jobs' });
    assert.deepEqual(listed.body.views.map((v: { name: string }) => v.name), ['oa failed']);
    assert.equal((await call('GET', '/api/views')).status, 200);
    assert.equal((await call('GET', '/api/views', { query: 'page=nope' })).status, 400);
    assert.equal((await call('DELETE', '/api/views/{id}', { params: { id: saved.body.id } })).status, 200);
    assert.equal((await call('DELETE', '/api/views/{id}', { params: { id: saved.body.id } })).status, 404);
  });
});

after(() => {
  // Every documented operation was called, and answered each documented 2xx at least once.
  const missing: string[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(item)) {
      const statuses = seen.get(`${m} ${p}`);
      if (!statuses) missing.push(`${m.toUpperCase()} ${p} was never called`);
      for (const s of Object.keys(op.responses)) if (s.startsWith('2') && !statuses?.has(s)) missing.push(`${m.toUpperCase()} ${p} never answered ${s}`);
    }
  }
  assert.deepEqual(missing, []);
});
