/**
 * Hostile input: hundreds of malformed or malicious requests to every route handler (bad
 * JSON, huge bodies, wrong types, SQL injection in every filter, path traversal, Unicode
 * edge cases, numbers out of range), with sign-in on and an admin's credentials (so every
 * request reaches validation). Not one answers 5xx; every refusal is
 * {"error":{"code","message"}} with no stack or SQL; and no row changes (the audit log only
 * records the attempted actions that matched nothing, each with 0 changed).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { insertJob } from '../../test/factories';
import { uniquePrefix } from '../../test/processes';
import { loadRoutes } from '../../test/api-routes';
import { SseReader } from '../../test/sse';
import { enc, send, stateOf, type Send } from '../../test/auth/harness';

const db = await testDatabase();
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = uniquePrefix('hostile');
process.env.LEASEHOLD_AUTH = 'on';
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const { userAdd, sessionCreate, tokenCreate } = await import('@/lib/auth/store');
const routes = await loadRoutes();
const { token } = await tokenCreate(db.pool, { name: 'hostile-admin', scope: 'admin', createdBy: 'test' });
const admin = (await sessionCreate(db.pool, (await userAdd(db.pool, { name: 'root', role: 'admin', password: 'root-password-123' })).id)).id;
for (const status of ['queued', 'failed', 'completed', 'running', 'cancelled'] as const) {
  await insertJob(db.pool, { status, queue: 'victim', type: 'demo.sleep', payload: { ms: 1, who: 'victim' }, workerId: status === 'running' ? 'w-1' : undefined });
}

const SQLI = [
  `' OR '1'='1`,
  `'; DROP TABLE jobs; --`,
  `1; UPDATE jobs SET status='completed'`,
  `1 UNION SELECT password_hash FROM users`,
  `") OR 1=1 --`,
  `%' AND pg_sleep(5) IS NULL AND '%'='`,
  `\\'; DELETE FROM users; --`,
  `$1`,
  `1)::int; SELECT 1; --`,
  `queued' OR status IS NOT NULL --`,
];
const TRAVERSAL = ['../../etc/passwd', '..%2F..%2Fetc%2Fpasswd', '%2e%2e%2f', '....//....//', '/etc/passwd', '..\\..\\windows', '%00', 'a%00b', '%', '%E0%A4%A'];
const UNICODE = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\u202Eevil\u202C',
  '\u200B\u200B',
  '\uFEFF',
  '１２３',
  '٣',
  '𝟙𝟚𝟛',
  'é'.normalize('NFD'),
  '😀'.repeat(300),
  'x'.repeat(10_000),
];
const NUMBERS = ['-1', '0', '1e9', '1e999', 'NaN', 'Infinity', '-Infinity', '1.5', '0x10', '9223372036854775808', '99999999999999999999999', '00012', ' 5', '5 ', '+5', ''];

interface Case {
  what: string;
  method: string;
  path: string;
  s: Send;
}
const cases: Case[] = [];
const add = (what: string, method: string, path: string, s: Send) => cases.push({ what, method, path, s });

// 1. Bad JSON (and non-JSON) bodies on every POST route.
const BAD_JSON = ['{', '[', '{"type":', '{"a":1,}', "{'a':1}", 'undefined', 'NaN', '\uFEFF{}x', '{"__proto__":{"admin":true}}', '['.repeat(100_000), '"str"', '1e999', 'null', 'true', '[[],[]]'];
const POSTS: [string, Record<string, string>][] = [
  ['/api/jobs', {}],
  ['/api/jobs/{id}/requeue', { id: '1' }],
  ['/api/jobs/{id}/cancel', { id: '1' }],
  ['/api/actions/{action}', { action: 'requeue' }],
  ['/api/recover', {}],
  ['/api/queues/{name}', { name: 'victim' }],
  ['/api/auth/signin', {}],
  ['/api/auth/setup', {}],
  ['/api/views', {}],
];
for (const [path, params] of POSTS) for (const raw of BAD_JSON) add(`bad JSON ${JSON.stringify(raw.slice(0, 20))}`, 'POST', path, { params, raw });

// 2. Huge bodies.
add('2 MiB enqueue', 'POST', '/api/jobs', { raw: JSON.stringify({ type: 'demo.noop', payload: { s: 'x'.repeat(2 * 1024 * 1024) } }) });
add('1 MiB + payload', 'POST', '/api/jobs', { body: { type: 'demo.noop', payload: { s: 'x'.repeat(1024 * 1024 + 10) } } });
add('5000 jobs in one enqueue', 'POST', '/api/jobs', { body: Array.from({ length: 5000 }, () => ({ type: 'no.such' })) });
add('300 KiB action body', 'POST', '/api/actions/{action}', { params: { action: 'requeue' }, raw: JSON.stringify({ ids: ['1'], pad: 'x'.repeat(300 * 1024) }) });
add('5000 ids', 'POST', '/api/actions/{action}', { params: { action: 'requeue' }, body: { ids: Array.from({ length: 5000 }, (_, k) => String(k + 1)) } });
add('64 KiB sign-in', 'POST', '/api/auth/signin', { body: { name: 'root', password: 'x'.repeat(64 * 1024) } });
add('100 KiB requeue body', 'POST', '/api/jobs/{id}/requeue', { params: { id: '1' }, raw: JSON.stringify({ reason: 'x'.repeat(100 * 1024) }) });
add('payload nested 10000 deep', 'POST', '/api/jobs', { raw: `{"type":"demo.noop","payload":{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}}` });
add('payload nested 1000 deep', 'POST', '/api/jobs', { raw: `{"type":"demo.noop","payload":${'['.repeat(1000)}${']'.repeat(1000)}}` });
add('a 20 KB query string', 'GET', '/api/jobs', { query: `q=${'x'.repeat(20_000)}` });

// 3. Wrong types.
const WRONG: [string, Record<string, string>, unknown][] = [
  ['/api/jobs', {}, { type: 1 }],
  ['/api/jobs', {}, { type: ['demo.noop'] }],
  ['/api/jobs', {}, { type: 'demo.sleep', payload: { ms: 'soon' } }],
  ['/api/jobs', {}, { type: 'demo.noop', maxAttempts: 0 }],
  ['/api/jobs', {}, { type: 'demo.noop', maxAttempts: 101 }],
  ['/api/jobs', {}, { type: 'demo.noop', maxAttempts: 1.5 }],
  ['/api/jobs', {}, { type: 'demo.noop', runAt: 'tomorrow' }],
  ['/api/jobs', {}, { type: 'demo.noop', runAt: '99999-01-01T00:00:00Z' }],
  ['/api/jobs', {}, { type: 'demo.noop', idempotencyKey: 5 }],
  ['/api/jobs', {}, { type: 'demo.noop', queue: '' }],
  ['/api/jobs', {}, { type: 'demo.noop', extra: true }],
  ['/api/jobs/{id}/requeue', { id: '1' }, { resetAttempts: 'yes' }],
  ['/api/jobs/{id}/requeue', { id: '1' }, { reason: 42 }],
  ['/api/jobs/{id}/cancel', { id: '1' }, { force: true }],
  ['/api/actions/{action}', { action: 'requeue' }, { ids: '1' }],
  ['/api/actions/{action}', { action: 'requeue' }, { ids: [1] }],
  ['/api/actions/{action}', { action: 'requeue' }, { ids: [] }],
  ['/api/actions/{action}', { action: 'requeue' }, { ids: ['1'], filter: { status: 'failed' } }],
  ['/api/actions/{action}', { action: 'requeue' }, { all: true }],
  ['/api/actions/{action}', { action: 'requeue' }, { filter: {} }],
  ['/api/actions/{action}', { action: 'requeue' }, { filter: { status: 'exploded' } }],
  ['/api/actions/{action}', { action: 'requeue' }, { filter: { status: 'failed', drop: 'table' } }],
  ['/api/actions/{action}', { action: 'requeue' }, { filter: 'status=failed' }],
  ['/api/recover', {}, { dryRun: 'no' }],
  ['/api/recover', {}, { ids: ['x'] }],
  ['/api/queues/{name}', { name: 'victim' }, {}],
  ['/api/queues/{name}', { name: 'victim' }, { paused: 'true' }],
  ['/api/queues/{name}', { name: 'victim' }, { concurrencyLimit: -1 }],
  ['/api/queues/{name}', { name: 'victim' }, { concurrencyLimit: 1e20 }],
  ['/api/queues/{name}', { name: 'victim' }, { rateLimit: 5 }],
  ['/api/queues/{name}', { name: 'victim' }, { rateLimit: 5, ratePeriodMs: 0 }],
  ['/api/auth/signin', {}, { name: 'root' }],
  ['/api/auth/signin', {}, { name: ['root'], password: 'x' }],
  ['/api/auth/signin', {}, { name: 'root', password: { $ne: null } }],
  ['/api/auth/setup', {}, { token: '../../x', name: 'a', password: 'b' }],
  ['/api/views', {}, { name: 1, page: 'jobs', query: '' }],
  ['/api/views', {}, { name: ['x'], page: 'jobs', query: '' }],
  ['/api/views', {}, { name: 'x', page: 'admin', query: '' }],
  ['/api/views', {}, { name: 'x', page: 'jobs', query: { status: 'failed' } }],
  ['/api/views', {}, { name: 'x', page: 'jobs', query: 'status=exploded' }],
  ['/api/views', {}, { name: 'x', page: 'jobs', query: 'status=failed', createdBy: 1 }],
  ['/api/views', {}, { name: 'x', page: 'dead-letter', query: 'status=failed' }],
  ['/api/views', {}, { name: 'x', page: 'jobs', query: 'limit=1000000&cursor=1' }],
];
for (const [path, params, body] of WRONG) add(`wrong type ${JSON.stringify(body).slice(0, 60)}`, 'POST', path, { params, body });

// 4. SQL injection in every filter (query parameters, action filters in a preview, audit filters, path parameters).
const LIST_FILTERS = ['status', 'queue', 'type', 'id', 'worker', 'error', 'payload', 'fingerprint', 'q', 'maxId', 'cursor', 'limit'];
for (const f of LIST_FILTERS) for (const x of SQLI) add(`SQLi in ?${f}`, 'GET', '/api/jobs', { query: `${f}=${enc(x)}` });
for (const x of SQLI.slice(0, 4)) {
  add('SQLi in newer', 'GET', '/api/jobs/newer', { query: `after=1&queue=${enc(x)}` });
  add('SQLi in lookup', 'GET', '/api/jobs/lookup', { query: `ids=${enc(x)}` });
  add('SQLi in the live feed ids', 'GET', '/api/live', { query: `ids=${enc(x)}` });
  add('SQLi in the live feed filters', 'GET', '/api/live', { query: `after=1&error=${enc(x)}&every=1000` });
  for (const f of ['actor', 'action', 'jobId', 'cursor']) add(`SQLi in audit ?${f}`, 'GET', '/api/audit', { query: `${f}=${enc(x)}` });
  for (const f of ['queue', 'type', 'error', 'worker', 'q', 'payload']) {
    add(`SQLi in action filter.${f} (preview)`, 'POST', '/api/actions/{action}', { params: { action: 'requeue' }, body: { filter: { [f]: x }, preview: true } });
  }
  add('SQLi in an applied action filter', 'POST', '/api/actions/{action}', { params: { action: 'cancel' }, body: { filter: { queue: x } } });
  add('SQLi as a job id', 'GET', '/api/jobs/{id}', { params: { id: x } });
  add('SQLi as a job id (requeue)', 'POST', '/api/jobs/{id}/requeue', { params: { id: x } });
  add('SQLi as a queue name', 'POST', '/api/queues/{name}', { params: { name: x }, body: { concurrencyLimit: 0 } });
  add('SQLi as a sign-in name', 'POST', '/api/auth/signin', { body: { name: x, password: x } });
  add('SQLi in ?page of the saved views', 'GET', '/api/views', { query: `page=${enc(x)}` });
  add("SQLi as a saved view's filter name", 'POST', '/api/views', { body: { name: 'sqli', page: 'jobs', query: `${enc(x)}=1` } });
  add("SQLi in a saved view's status", 'POST', '/api/views', { body: { name: x, page: 'jobs', query: `status=${enc(x)}` } });
  add('SQLi as a saved view id', 'DELETE', '/api/views/{id}', { params: { id: x } });
}

// 5. Path traversal in every path parameter.
for (const x of TRAVERSAL) {
  add('traversal as a job id', 'GET', '/api/jobs/{id}', { params: { id: x } });
  add('traversal as a result id', 'GET', '/api/jobs/{id}/result', { params: { id: x } });
  add('traversal as an action', 'POST', '/api/actions/{action}', { params: { action: x }, body: { ids: ['1'] } });
  add('traversal as a queue name', 'POST', '/api/queues/{name}', { params: { name: x }, body: { paused: false } });
  add('traversal as a cancel id', 'POST', '/api/jobs/{id}/cancel', { params: { id: x } });
  add('traversal as a saved view id', 'DELETE', '/api/views/{id}', { params: { id: x } });
}

// 6. Unicode edge cases in text fields and parameters.
for (const x of UNICODE) {
  add('unicode queue filter', 'GET', '/api/jobs', { query: `queue=${enc(x)}` });
  add('unicode as a job id', 'GET', '/api/jobs/{id}', { params: { id: x } });
  add('unicode enqueue (unknown type)', 'POST', '/api/jobs', { body: { type: x, queue: x } });
  add('unicode payload key/values', 'POST', '/api/jobs', { raw: `{"type":"demo.sleep","payload":{"ms":"${x.length > 100 ? 'x' : JSON.stringify(x).slice(1, -1)}"}}` });
  add('unicode reason', 'POST', '/api/jobs/{id}/requeue', { params: { id: '1' }, body: { reason: x, resetAttempts: 'no' } });
  add('unicode sign-in', 'POST', '/api/auth/signin', { body: { name: x, password: x } });
  add('unicode as a saved view id', 'DELETE', '/api/views/{id}', { params: { id: x } });
  add("unicode in a saved view's filter name", 'POST', '/api/views', { body: { name: x, page: 'jobs', query: `${enc(x)}=1` } });
}
// Saved view names that cannot be stored or shown as one line.
for (const name of ['\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '😀'.repeat(300), 'x'.repeat(10_000), 'two\nlines', '\u001b[31mred']) {
  add(`saved view name ${JSON.stringify(name.slice(0, 12))}`, 'POST', '/api/views', { body: { name, page: 'jobs', query: 'status=failed' } });
}
// A payload filter's value is JSON-decoded: escapes of what PostgreSQL cannot store in jsonb.
for (const v of ['"\\u0000"', '"a\\ud800"', '"\\udc00"']) {
  add(`payload filter a=${v}`, 'GET', '/api/jobs', { query: `payload=${enc(`a=${v}`)}` });
  add(`payload filter a=${v} (newer)`, 'GET', '/api/jobs/newer', { query: `after=1&payload=${enc(`a=${v}`)}` });
  add(`payload filter a=${v} (live)`, 'GET', '/api/live', { query: `after=1&every=1000&payload=${enc(`a=${v}`)}` });
  add(`payload filter a=${v} (preview)`, 'POST', '/api/actions/{action}', { params: { action: 'cancel' }, body: { filter: { payload: `a=${v}` }, preview: true } });
  add(`payload filter a=${v} (applied)`, 'POST', '/api/actions/{action}', { params: { action: 'cancel' }, body: { filter: { payload: `a=${v}` } } });
  add(`payload filter a=${v} (saved view)`, 'POST', '/api/views', { body: { name: 'payload', page: 'jobs', query: `payload=${enc(`a=${v}`)}` } });
}

// 7. Numbers out of range.
for (const n of NUMBERS) {
  add(`?limit=${n}`, 'GET', '/api/jobs', { query: `limit=${enc(n)}` });
  add(`?cursor=${n}`, 'GET', '/api/jobs', { query: `cursor=${enc(n)}` });
  add(`audit ?limit=${n}`, 'GET', '/api/audit', { query: `limit=${enc(n)}` });
  add(`job id ${n}`, 'GET', '/api/jobs/{id}', { params: { id: n } });
  add(`saved view id ${n}`, 'DELETE', '/api/views/{id}', { params: { id: n } });
  add(`saved view id=${n}`, 'POST', '/api/views', { body: { name: `id ${n}`, page: 'jobs', query: `id=${enc(n)}` } });
  add(`after=${n}`, 'GET', '/api/jobs/newer', { query: `after=${enc(n)}` });
  add(`live every=${n}`, 'GET', '/api/live', { query: `stats=1&every=${enc(n)}` });
}
for (const v of [-1, 0, 1e300, 2 ** 53, -0, 1.5]) {
  add(`concurrencyLimit ${v}`, 'POST', '/api/queues/{name}', { params: { name: 'victim' }, body: { concurrencyLimit: v, rateLimit: v } });
  add(`maxAttempts ${v}`, 'POST', '/api/jobs', { body: { type: 'demo.noop', maxAttempts: v, queue: '' } });
}
// Unknown query parameters and repeated ones.
add('unknown query parameter', 'GET', '/api/jobs', { query: 'drop=table' });
add('repeated status', 'GET', '/api/jobs', { query: 'status=failed&status=queued&status=%27' });
add('repeated status in a saved view', 'POST', '/api/views', { body: { name: 'twice', page: 'jobs', query: 'status=failed&status=queued' } });
add('repeated page', 'GET', '/api/views', { query: 'page=jobs&page=dead-letter' });
add('prototype pollution in a saved view', 'POST', '/api/views', { body: { name: 'proto', page: 'jobs', query: '__proto__[admin]=1&constructor[prototype][x]=1' } });
add('prototype pollution query', 'GET', '/api/jobs', { query: '__proto__[admin]=1&constructor[prototype][x]=1' });

async function firstEvents(res: Response): Promise<string> {
  const sse = new SseReader(res.body!);
  const first = await sse.next();
  await sse.cancel();
  return first ? `event: ${first.event}\ndata: ${first.data}` : '';
}

/** What a leaked database error or stack looks like (the input itself may be echoed, quoted, in a 4xx message). */
const STACK = /\n\s+at |node_modules|syntax error at|relation "|column "|violates|duplicate key|invalid input syntax|out of range for type|\bpg_|ECONN/;

test(`${cases.length} hostile requests: no 5xx, every error well-formed, nothing changed`, { timeout: 300_000 }, async () => {
  assert.ok(cases.length >= 200, `at least 200 hostile requests (${cases.length})`);
  const before = await stateOf(db.pool);
  const auditBefore = (await db.pool.query('SELECT coalesce(max(audit_id), 0) AS id FROM audit_log')).rows[0].id;
  const problems: string[] = [];
  const statuses = new Map<number, number>();
  let k = 0;
  for (const c of cases) {
    // Alternate credentials: the bearer token and the admin's browser session (with the console's headers).
    const creds = k++ % 2 === 0 ? { bearer: token } : { cookie: admin };
    const res = await send(routes, c.method, c.path, { ...c.s, ...creds });
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    // The live feed answers a good query with a stream that goes on: its first events will do.
    const text = res.headers.get('content-type')?.startsWith('text/event-stream') ? await firstEvents(res) : await res.text();
    if (/^event: problem$/m.test(text)) problems.push(`${c.what}: the live feed could not read: ${text.slice(0, 200)}`);
    if (res.status >= 500) problems.push(`${c.what}: ${c.method} ${c.path} → ${res.status} ${text.slice(0, 200)}`);
    if (res.status >= 400) {
      let body: { error?: { code?: unknown; message?: unknown } } | null = null;
      try {
        body = JSON.parse(text);
      } catch {
        /* reported below */
      }
      if (typeof body?.error?.code !== 'string' || typeof body?.error?.message !== 'string') problems.push(`${c.what}: not {"error":{code,message}}: ${text.slice(0, 200)}`);
      else if (STACK.test(body.error.message as string)) problems.push(`${c.what}: the message leaks internals: ${String(body.error.message).slice(0, 200)}`);
    }
  }
  assert.deepEqual(problems, []);
  assert.equal(await stateOf(db.pool), before, 'no job, attempt, queue, schedule, user, token or saved view row changed');
  const { rows } = await db.pool.query('SELECT action, changed FROM audit_log WHERE audit_id > $1', [auditBefore]);
  assert.ok(rows.every((r) => r.changed === 0), `the audit log only records attempts that changed nothing: ${JSON.stringify(rows)}`);
  const { rows: tables } = await db.pool.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name IN ('jobs', 'users', 'audit_log')`);
  assert.equal(tables[0].n, 3, 'every table is still there');
  console.log(`hostile: ${cases.length} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
});
