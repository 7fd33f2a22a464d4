/**
 * GET /api/jobs/export through its route handler, with sign-in on: the list's filters and
 * order as CSV (quoted as RFC 4180 asks, formulas defused) or NDJSON (ending with a summary),
 * cut at `max` saying so and where to go on from, and a viewer's copy redacted as the list is.
 */
import assert from 'node:assert/strict';
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
process.env.LEASEHOLD_REDIS_PREFIX = uniquePrefix('export');
process.env.LEASEHOLD_AUTH = 'on';
process.env.LEASEHOLD_REDACT_KEYS = 'secret';
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const { userAdd, sessionCreate } = await import('@/lib/auth/store');
const routes = await loadRoutes();
const session = async (name: string, role: string) => (await sessionCreate(db.pool, (await userAdd(db.pool, { name, role, password: `${name}-password-123` })).id)).id;
const operator = await session('olaf', 'operator');
const viewer = await session('vivi', 'viewer');

const QUEUE = 'export-q';
const failed: string[] = [];
for (const [error, payload, priority] of [
  ['=HYPERLINK("http://evil.example","click")', { n: 1, secret: 's-1' }, 0],
  ['timeout, "upstream" said\nno', { n: 2 }, 0],
  ['plain', { n: 3 }, 7],
  ['+1 more', { n: 4 }, 0],
  ['ok', { n: 5 }, 0],
] as const) {
  const id = await insertJob(db.pool, { queue: QUEUE, status: 'failed', attemptCount: 3, maxAttempts: 3, payload, priority });
  await db.pool.query(`UPDATE jobs SET error = $2, finished_at = now() - ($3::int * interval '1 minute') WHERE job_id = $1`, [id, error, 10 - failed.length]);
  failed.push(id);
}
await insertJob(db.pool, { queue: QUEUE, status: 'queued' });
await insertJob(db.pool, { queue: 'export-other', status: 'failed', attemptCount: 3, maxAttempts: 3 });

const exportOf = async (cookie: string, query: string) => {
  const res = await send(routes, 'GET', '/api/jobs/export', { cookie, query });
  return { res, text: res.status === 200 ? await res.text() : '', body: res.status !== 200 ? await res.json() : null };
};

/** A CSV parsed by RFC 4180's rules: quoted fields may hold commas, quotes ("") and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') row.push(field), rows.push(row), (row = []), (field = ''), i++;
    else field += c;
  }
  return rows;
}

test('CSV: a header, the failed jobs of the queue latest failure first, quoted as RFC 4180 asks, formulas defused', async () => {
  const { res, text } = await exportOf(operator, `status=failed&queue=${QUEUE}&format=csv`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/csv/);
  assert.match(res.headers.get('content-disposition')!, /^attachment; filename="jobs-failed-\d{8}T\d{6}Z\.csv"$/);
  const rows = parseCsv(text);
  assert.deepEqual(rows[0], ['id', 'status', 'queue', 'type', 'attempt_count', 'max_attempts', 'worker_id', 'created_at', 'run_at', 'started_at', 'finished_at', 'error', 'payload', 'priority']);
  assert.deepEqual(rows.slice(1).map((r) => r[0]), [...failed].reverse(), 'latest failure first; no other queue, no queued job');
  const byId = new Map(rows.slice(1).map((r) => [r[0], r]));
  assert.equal(byId.get(failed[0]!)![11], `'=HYPERLINK("http://evil.example","click")`, 'a formula is text');
  assert.equal(byId.get(failed[3]!)![11], "'+1 more");
  assert.equal(byId.get(failed[1]!)![11], 'timeout, "upstream" said\nno', 'commas, quotes and a line break survive');
  assert.deepEqual(JSON.parse(byId.get(failed[2]!)![12]!), { n: 3 });
  assert.deepEqual([byId.get(failed[2]!)![13], byId.get(failed[0]!)![13]], ['7', '0'], 'the priority, last');
  assert.equal(text.includes('# cut'), false, 'complete: no cut line');
});

test('NDJSON: one job a line, then the summary; cut at max it says so, and the list goes on from its cursor', async () => {
  const whole = await exportOf(operator, `status=failed&queue=${QUEUE}&format=ndjson`);
  assert.match(whole.res.headers.get('content-type')!, /^application\/x-ndjson/);
  const lines = whole.text.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.slice(0, -1).map((j) => j.id), [...failed].reverse());
  assert.deepEqual(lines.at(-1), { export: { rows: 5, complete: true, cut: null, nextCursor: null } });

  const cut = await exportOf(operator, `status=failed&queue=${QUEUE}&format=ndjson&max=3`);
  const part = cut.text.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(part.length, 4);
  const end = part.at(-1).export;
  assert.deepEqual([end.rows, end.complete, end.cut], [3, false, 'max']);
  const rest = await send(routes, 'GET', '/api/jobs', { cookie: operator, query: `status=failed&queue=${QUEUE}&cursor=${end.nextCursor}` });
  assert.deepEqual((await rest.json()).jobs.map((j: { id: string }) => j.id), [failed[1], failed[0]], 'the two the export did not write');

  const csvCut = await exportOf(operator, `queue=${QUEUE}&max=2`);
  assert.match(csvCut.text.trimEnd().split('\r\n').at(-1)!, /^# cut at 2 jobs \(the max asked for\): more match/);
});

test("a viewer's export is redacted as the list is; a filter on a hidden key's value is refused; bad input is a 400", async () => {
  const { text } = await exportOf(viewer, `status=failed&queue=${QUEUE}&format=ndjson`);
  assert.equal(text.includes('s-1'), false);
  assert.ok(text.includes('"secret":"[redacted]"'));
  assert.ok((await exportOf(operator, `status=failed&queue=${QUEUE}&format=ndjson`)).text.includes('"secret":"s-1"'));
  assert.equal((await exportOf(viewer, `payload=${encodeURIComponent('secret=s-1')}`)).res.status, 403);
  for (const q of ['format=xlsx', 'max=0', 'max=100001', 'status=nope', 'limit=5']) {
    const r = await exportOf(operator, q);
    assert.equal(r.res.status, 400, q);
    assert.equal(typeof r.body.error.message, 'string');
  }
});

test('an export whose read fails part way ends with a line saying so, in the words a route would use, never the raw error', async () => {
  await db.pool.query(`INSERT INTO jobs (queue, type, payload) SELECT 'export-big', 'demo.noop', '{}'::jsonb FROM generate_series(1, 201)`);
  const { exportJobs } = await import('@/lib/server/job-export');
  // The database's own answers for the first page (read before the stream is returned); then
  // a failure whose text is not for a viewer's eyes.
  let broken = false;
  const failing = {
    query: (...a: unknown[]) =>
      broken ? Promise.reject(new Error('connect ECONNREFUSED 10.0.0.5:5432 (user billing_rw)')) : (db.pool.query as (...x: unknown[]) => Promise<unknown>)(...a),
  } as unknown as typeof db.pool;
  const body = await exportJobs(failing, { queue: 'export-big' }, { format: 'ndjson', max: 1000, redaction: null });
  broken = true;
  const lines = (await new Response(body).text()).trim().split('\n');
  assert.equal(lines.length, 201, 'the first page (200), then the last line');
  const last = JSON.parse(lines.at(-1)!);
  assert.deepEqual([last.export.rows, last.export.complete], [200, false]);
  assert.equal(last.export.error, 'internal error (logged on the server)');
  assert.doesNotMatch(lines.at(-1)!, /10\.0\.0\.5|billing_rw/);
});

test(`one viewer runs at most two exports at once (then 429 with Retry-After); one that ends or is cancelled frees its place; others still get theirs`, async () => {
  const { MAX_EXPORTS_PER_VIEWER } = await import('@/lib/http/schemas');
  const query = `queue=${QUEUE}&format=csv`;
  // Unread: each waits on its reader, its place held.
  const open = [];
  for (let k = 0; k < MAX_EXPORTS_PER_VIEWER; k++) {
    const res = await send(routes, 'GET', '/api/jobs/export', { cookie: operator, query });
    assert.equal(res.status, 200);
    open.push(res);
  }
  const refused = await send(routes, 'GET', '/api/jobs/export', { cookie: operator, query });
  assert.equal(refused.status, 429);
  assert.equal((await refused.json()).error.code, 'rate_limited');
  assert.ok(Number(refused.headers.get('retry-after')) > 0);
  const other = await send(routes, 'GET', '/api/jobs/export', { cookie: viewer, query });
  assert.equal(other.status, 200, "another viewer's export is not held up");
  await other.body!.cancel();

  await open[0]!.body!.cancel(); // a download cancelled
  const again = await send(routes, 'GET', '/api/jobs/export', { cookie: operator, query });
  assert.equal(again.status, 200);
  assert.equal(parseCsv(await again.text()).length, 1 + 6, 'read to its end (the header, five failed jobs and one queued)...');
  await open[1]!.text();
  const third = await send(routes, 'GET', '/api/jobs/export', { cookie: operator, query });
  assert.equal(third.status, 200, '...and ended, both freed their places');

  // A client gone before the body was read (never pulled nor cancelled): its place is freed
  // when the request's signal aborts. A HEAD takes none, and reads nothing.
  const gone = new AbortController();
  assert.equal((await send(routes, 'GET', '/api/jobs/export', { cookie: operator, query, signal: gone.signal })).status, 200);
  assert.equal((await send(routes, 'GET', '/api/jobs/export', { cookie: operator, query })).status, 429, 'two held: third, and the one whose client is about to go');
  gone.abort();
  for (let k = 0; k < 3; k++) {
    const head = await send(routes, 'HEAD', '/api/jobs/export', { cookie: operator, query });
    assert.equal(head.status, 200);
    assert.equal(head.body, null);
  }
  const fourth = await send(routes, 'GET', '/api/jobs/export', { cookie: operator, query });
  assert.equal(fourth.status, 200, 'the gone client freed its place, and the HEADs took none');
  await Promise.all([third.body!.cancel(), fourth.body!.cancel()]);
});
