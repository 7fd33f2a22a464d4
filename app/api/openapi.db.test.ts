/**
 * OpenAPI conformance: the document at /api/openapi.json describes every route handler
 * under app/api (and nothing else), is a valid OpenAPI 3.1 document, and every route,
 * called with real Requests against a real database, answers with a status the document
 * lists and a body its schema accepts (ajv, JSON Schema 2020-12).
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { validate as validateOpenApi, compileErrors } from '@readme/openapi-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { findRouteFiles, loadRoutes, undocumented, unimplemented } from '../../test/api-routes';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { insertJob } from '../../test/factories';
import { uniquePrefix } from '../../test/processes';

const db = await testDatabase();
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = uniquePrefix('openapi');
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const { buildOpenApiDocument } = await import('@/lib/http/openapi/document');
const { apiRoutes } = await import('@/lib/http/openapi/routes');
const { workerRegister } = await import('@/lib/queue/ops');

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
  const res = await handler(new Request(url, { method, body, headers: body ? { 'content-type': 'application/json' } : {} }), {
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
      `INSERT INTO job_attempts (job_id, attempt, worker_id, started_at, outcome, error, error_stack)
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

  test('POST /api/recover', async () => {
    await insertJob(db.pool, { status: 'running', workerId: 'gone', leaseInMs: -5_000 });
    await insertJob(db.pool, { runInMs: -60_000 }); // due, waiting, never rung
    const preview = await call('POST', '/api/recover', { body: { dryRun: true } });
    assert.ok(preview.body.expired.length >= 1);
    assert.ok((await call('POST', '/api/recover')).body.expired.length >= 1);
    assert.equal((await call('POST', '/api/recover', { body: { dryRun: 'yes' } })).status, 400);
  });

  test('GET /api/stats, /api/workers, /api/health, /api/metrics, /api/openapi.json', async () => {
    await workerRegister(db.pool, { workerId: 'oa-host:1:abc', host: 'oa-host', pid: 1, queues: ['default', 'oa'], concurrency: 4 });
    assert.equal((await call('GET', '/api/stats')).status, 200);
    assert.equal((await call('GET', '/api/workers')).body.workers.length, 1);
    assert.deepEqual((await call('GET', '/api/health')).body, { ok: true });
    assert.equal((await call('GET', '/api/health', { query: 'ready' })).body.postgres, 'ok');
    assert.match((await call('GET', '/api/metrics')).body, /leasehold_jobs\{/);
    assert.equal((await call('GET', '/api/openapi.json')).status, 200);
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
