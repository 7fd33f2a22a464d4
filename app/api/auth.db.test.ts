/**
 * Access control, through every route handler under app/api with sign-in on:
 *  - no credentials: every route answers 401 (the few open ones excepted) and changes nothing;
 *  - a viewer reads, and every action it tries answers 403 and changes nothing;
 *  - an operator acts but may not delete; an admin may;
 *  - a cookie request from a foreign Origin (or without one, or a simple one) answers 403 csrf and changes nothing;
 *  - an enqueue token enqueues and nothing else; a revoked token stops working at once;
 *  - sign-out ends the session on the server; sign-in is rate-limited; the cookie's flags.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { insertJob, jobRow } from '../../test/factories';
import { uniquePrefix } from '../../test/processes';
import { waitFor } from '../../test/wait';
import { loadRoutes } from '../../test/api-routes';
import { auditCount, send, stateOf } from '../../test/auth/harness';
import { MAX_PER_ACCOUNT, MAX_PER_ADDRESS, PEER_GUARD, PEER_HEADER } from '../../lib/auth/rate-limit';

// As in the console's process, where worker/http-guard.mjs marks it: the peer header set on a request is trusted.
(globalThis as Record<symbol, unknown>)[PEER_GUARD] = true;

const db = await testDatabase();
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = uniquePrefix('auth');
process.env.LEASEHOLD_AUTH = 'on';
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());

const { userAdd, userVerify, sessionCreate, tokenCreate, tokenRevoke } = await import('@/lib/auth/store');
const { openLiveStreams } = await import('@/lib/server/live');
const { MAX_LIVE_STREAMS_PER_VIEWER } = await import('@/lib/http/schemas');
const routes = await loadRoutes();

/** Routes anyone may call: liveness, the API description, and signing in/out/up. */
const OPEN = new Set(['get /api/health', 'get /api/openapi.json', 'post /api/auth/signin', 'post /api/auth/signout', 'post /api/auth/setup']);

const failed = await insertJob(db.pool, { status: 'failed', attemptCount: 3, maxAttempts: 3, queue: 'auth-q' });
const queued = await insertJob(db.pool, { status: 'queued', queue: 'auth-q' });

async function session(name: string, role: string) {
  const u = await userAdd(db.pool, { name, role, password: `${name}-password-123` });
  return (await sessionCreate(db.pool, u.id)).id;
}
const viewer = await session('vera', 'viewer');
const operator = await session('otto', 'operator');
const admin = await session('ada', 'admin');
const { viewSave } = await import('@/lib/views/store');
const savedView = (await viewSave(db.pool, { name: 'Failed in auth-q', page: 'jobs', query: 'status=failed&queue=auth-q', createdBy: null })).id;

/** A request each route would act on if it were let through: real ids, a real queue, valid bodies. */
function sampleFor(method: string, path: string): { params?: Record<string, string>; body?: unknown; query?: string } {
  switch (`${method} ${path}`) {
    case 'post /api/jobs':
      return { body: { type: 'demo.noop' } };
    case 'post /api/jobs/{id}/requeue':
      return { params: { id: failed }, body: { reason: 'try again' } };
    case 'post /api/jobs/{id}/cancel':
      return { params: { id: queued } };
    case 'post /api/actions/{action}':
      return { params: { action: 'delete' }, body: { ids: [failed, queued] } };
    case 'post /api/recover':
      return { body: {} };
    case 'post /api/queues/{name}':
      return { params: { name: 'auth-q' }, body: { paused: true } };
    case 'post /api/auth/signin':
      return { body: { name: 'otto', password: 'wrong password' } };
    case 'post /api/auth/setup':
      return { body: { token: 'not-a-real-setup-token', name: 'mallory', password: 'mallory-password' } };
    case 'get /api/jobs/lookup':
      return { query: `ids=${failed},${queued}` };
    case 'get /api/jobs/newer':
      return { query: `after=${failed}` };
    case 'get /api/live':
      return { query: `stats=1&ids=${failed},${queued}&after=${failed}` };
    case 'get /api/views':
      return { query: 'page=jobs' };
    case 'get /api/stats/history':
      return { query: 'range=24h' };
    case 'get /api/cron':
      return { query: 'cron=0+3+*+*+*' };
    case 'post /api/views':
      return { body: { name: 'Queued in auth-q', page: 'jobs', query: 'status=queued&queue=auth-q' } };
    case 'delete /api/views/{id}':
      return { params: { id: savedView } };
    default:
      return { params: { id: failed, action: 'requeue', name: 'auth-q' } };
  }
}

const every = routes.flatMap((r) => [...r.methods.keys()].map((m) => ({ method: m, path: r.path })));

describe('without credentials', () => {
  test('every route but the open ones answers 401, and nothing changes', async () => {
    assert.ok(every.length >= 20, `found the routes (${every.length})`);
    const before = await stateOf(db.pool);
    const wrong: string[] = [];
    for (const { method, path } of every) {
      const key = `${method} ${path}`;
      if (OPEN.has(key)) continue;
      for (const creds of [{}, { cookie: 'forged-session-id' }, { bearer: 'lh_forged' }, { headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } }]) {
        const res = await send(routes, method.toUpperCase(), path, { ...sampleFor(method, path), ...creds });
        if (res.status !== 401) wrong.push(`${key} ${JSON.stringify(creds)} → ${res.status}`);
        else assert.equal((await res.json()).error.code, 'unauthorized');
      }
    }
    assert.deepEqual(wrong, []);
    assert.equal(await stateOf(db.pool), before);
  });

  test('the open routes change nothing either', async () => {
    const before = await stateOf(db.pool);
    for (const key of OPEN) {
      const [method, path] = key.split(' ') as [string, string];
      const res = await send(routes, method.toUpperCase(), path, sampleFor(method, path));
      assert.ok(res.status < 500, `${key} → ${res.status}`);
    }
    assert.equal(await stateOf(db.pool), before);
  });
});

describe('roles, checked on the server', () => {
  const actions = every.filter((r) => r.method !== 'get' && !OPEN.has(`${r.method} ${r.path}`));

  test('a viewer reads every GET route but the admin ones', async () => {
    for (const { method, path } of every.filter((r) => r.method === 'get' && !r.path.startsWith('/api/admin/'))) {
      const res = await send(routes, 'GET', path, { ...sampleFor(method, path), cookie: viewer });
      assert.ok([200, 404].includes(res.status), `GET ${path} → ${res.status}`);
      await res.body?.cancel(); // the live feed's stream would run on
    }
  });

  test("a viewer's every action answers 403 and changes nothing", async () => {
    assert.ok(actions.length >= 6, `found the action routes (${actions.length})`);
    const before = await stateOf(db.pool);
    for (const { method, path } of actions) {
      if (path === '/api/jobs') continue; // enqueue: below
      for (const action of path === '/api/actions/{action}' ? ['requeue', 'cancel', 'delete', 'recover'] : [null]) {
        const s = sampleFor(method, path);
        const res = await send(routes, method.toUpperCase(), path, {
          ...s,
          ...(action ? { params: { action }, body: action === 'recover' ? { all: true } : s.body } : {}),
          cookie: viewer,
        });
        assert.equal(res.status, 403, `${method} ${path} ${action ?? ''}`);
        assert.equal((await res.json()).error.code, 'forbidden');
      }
    }
    assert.equal((await send(routes, 'POST', '/api/jobs', { body: { type: 'demo.noop' }, cookie: viewer })).status, 403);
    assert.equal(await stateOf(db.pool), before);
  });

  test('an operator requeues and cancels but may not delete; an admin deletes', async () => {
    const before = await stateOf(db.pool);
    assert.equal((await send(routes, 'POST', '/api/actions/{action}', { params: { action: 'delete' }, body: { ids: [failed] }, cookie: operator })).status, 403);
    assert.equal(await stateOf(db.pool), before);
    assert.equal((await send(routes, 'POST', '/api/jobs/{id}/requeue', { params: { id: failed }, cookie: operator })).status, 200);
    assert.equal((await jobRow(db.pool, failed)).status, 'queued');
    const doomed = await insertJob(db.pool, { status: 'failed' });
    const res = await send(routes, 'POST', '/api/actions/{action}', { params: { action: 'delete' }, body: { ids: [doomed] }, cookie: admin });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).changed, 1);
  });
});

describe('users and tokens: admins only', () => {
  test('operators and viewers get 403 on every admin route and change nothing; an admin manages both', async () => {
    const adminRoutes = every.filter((r) => r.path.startsWith('/api/admin/'));
    assert.ok(adminRoutes.length >= 6, `found the admin routes (${adminRoutes.length})`);
    const before = await stateOf(db.pool);
    const bodies: Record<string, unknown> = {
      'post /api/admin/users': { name: 'mallory', role: 'admin', password: 'mallory-password' },
      'post /api/admin/tokens': { name: 'mallory-token', scope: 'admin' },
      'patch /api/admin/users/{name}': { role: 'viewer' },
    };
    for (const cookie of [viewer, operator]) {
      for (const { method, path } of adminRoutes) {
        const res = await send(routes, method.toUpperCase(), path, { cookie, params: { name: 'ada', id: '1' }, body: bodies[`${method} ${path}`] });
        assert.equal(res.status, 403, `${method} ${path}`);
      }
    }
    assert.equal(await stateOf(db.pool), before);
    const made = await send(routes, 'POST', '/api/admin/tokens', { cookie: admin, body: { name: 'ci', scope: 'viewer' } });
    assert.equal(made.status, 201);
    const { id, token } = await made.json();
    assert.equal((await send(routes, 'GET', '/api/stats', { bearer: token })).status, 200);
    assert.equal((await send(routes, 'POST', '/api/admin/tokens/{id}/revoke', { cookie: admin, params: { id } })).status, 200);
    assert.equal((await send(routes, 'GET', '/api/stats', { bearer: token })).status, 401, 'revoked through the API: refused at once');
    assert.equal((await send(routes, 'POST', '/api/admin/users', { cookie: admin, body: { name: 'newop', role: 'operator', password: 'newop-password-1' } })).status, 201);
    const s = await send(routes, 'POST', '/api/auth/signin', { body: { name: 'newop', password: 'newop-password-1' } });
    const sid = decodeURIComponent(/leasehold_session=([^;]+)/.exec(s.headers.get('set-cookie')!)![1]!);
    assert.equal((await send(routes, 'GET', '/api/auth/me', { cookie: sid })).status, 200);
    assert.equal((await send(routes, 'POST', '/api/admin/users/{name}/disable', { cookie: admin, params: { name: 'newop' } })).status, 200);
    assert.equal((await send(routes, 'GET', '/api/auth/me', { cookie: sid })).status, 401, "a disabled user's sessions end at once");
  });

  test("disable, revoke, a view's delete and sign-out read their bodies: a reason goes into the audit log, anything else is a 400 that changes nothing", async () => {
    assert.equal((await send(routes, 'POST', '/api/admin/users', { cookie: admin, body: { name: 'rhoda', role: 'viewer', password: 'rhoda-password-123' } })).status, 201);
    const { id: tokenId } = await (await send(routes, 'POST', '/api/admin/tokens', { cookie: admin, body: { name: 'rhoda-ci', scope: 'viewer' } })).json();
    const { id: viewId } = await (await send(routes, 'POST', '/api/views', { cookie: admin, body: { name: 'Rhoda failed', page: 'jobs', query: 'status=failed' } })).json();
    const before = await stateOf(db.pool);
    const audits = await auditCount(db.pool);
    for (const [method, path, params, body] of [
      ['POST', '/api/admin/users/{name}/disable', { name: 'rhoda' }, { x: 1 }],
      ['POST', '/api/admin/users/{name}/disable', { name: 'rhoda' }, { reason: 'x'.repeat(501) }],
      ['POST', '/api/admin/tokens/{id}/revoke', { id: String(tokenId) }, { reason: 42 }],
      ['DELETE', '/api/views/{id}', { id: String(viewId) }, { why: 'typo' }],
      ['POST', '/api/auth/signout', {}, { everywhere: true }],
    ] as const) {
      const res = await send(routes, method, path, { cookie: admin, params, body });
      assert.equal(res.status, 400, `${method} ${path} ${JSON.stringify(body)}`);
      assert.equal((await res.json()).error.code, 'invalid_request');
    }
    assert.equal(await stateOf(db.pool), before);
    assert.equal(await auditCount(db.pool), audits);
    for (const [method, path, params, action] of [
      ['POST', '/api/admin/users/{name}/disable', { name: 'rhoda' }, 'user.disable'],
      ['POST', '/api/admin/tokens/{id}/revoke', { id: String(tokenId) }, 'token.revoke'],
      ['DELETE', '/api/views/{id}', { id: String(viewId) }, 'view.delete'],
    ] as const) {
      assert.equal((await send(routes, method, path, { cookie: admin, params, body: { reason: `ticket 7: ${action}` } })).status, 200, path);
      const { rows } = await db.pool.query('SELECT reason FROM audit_log WHERE action = $1 ORDER BY audit_id DESC LIMIT 1', [action]);
      assert.equal(rows[0]?.reason, `ticket 7: ${action}`);
    }
  });

  test('a user name that differs from another only by case is refused (one name to people and to the sign-in limiter)', async () => {
    const before = await stateOf(db.pool);
    const res = await send(routes, 'POST', '/api/admin/users', { cookie: admin, body: { name: 'ADA', role: 'viewer', password: 'ada-upper-password-1' } });
    assert.equal(res.status, 409);
    assert.match((await res.json()).error.message, /a user named ada exists: names may not differ only by case/);
    assert.equal(await stateOf(db.pool), before);
    // Twins made before the rule stay manageable: a --replace of the exact name is no new name.
    const { userAdd } = await import('@/lib/auth/store');
    await db.pool.query(`INSERT INTO users (name, role, password_hash) VALUES ('Twin', 'viewer', 'x'), ('twin', 'viewer', 'x')`);
    assert.equal((await userAdd(db.pool, { name: 'twin', role: 'operator', password: 'twin-password-123', replace: true })).role, 'operator');
  });

  test("disabling an admin revokes the API tokens it made, and those its tokens made: leaving keeps no admin rights", async () => {
    assert.equal((await send(routes, 'POST', '/api/admin/users', { cookie: admin, body: { name: 'eve', role: 'admin', password: 'eve-password-123' } })).status, 201);
    const s = await send(routes, 'POST', '/api/auth/signin', { body: { name: 'eve', password: 'eve-password-123' } });
    const eve = decodeURIComponent(/leasehold_session=([^;]+)/.exec(s.headers.get('set-cookie')!)![1]!);
    const backup = (await (await send(routes, 'POST', '/api/admin/tokens', { cookie: eve, body: { name: 'eve-backup', scope: 'admin' } })).json()).token as string;
    const second = (await (await send(routes, 'POST', '/api/admin/tokens', { bearer: backup, body: { name: 'eve-second', scope: 'admin' } })).json()).token as string;
    const others = (await (await send(routes, 'POST', '/api/admin/tokens', { cookie: admin, body: { name: 'ops-ci', scope: 'admin' } })).json()).token as string;
    for (const t of [backup, second, others]) assert.equal((await send(routes, 'GET', '/api/auth/me', { bearer: t })).status, 200);
    assert.equal((await send(routes, 'POST', '/api/admin/users/{name}/disable', { cookie: admin, params: { name: 'eve' } })).status, 200);
    assert.equal((await send(routes, 'GET', '/api/auth/me', { bearer: backup })).status, 401, 'the token eve made');
    assert.equal((await send(routes, 'GET', '/api/auth/me', { bearer: second })).status, 401, 'the token her token made');
    assert.equal((await send(routes, 'GET', '/api/auth/me', { bearer: others })).status, 200, "another admin's token stays");
  });
});

describe('CSRF', () => {
  test('a cookie request from a foreign origin, without an origin, simple, or cross-site answers 403 csrf and changes nothing', async () => {
    const target = await insertJob(db.pool, { status: 'failed' });
    const before = await stateOf(db.pool);
    const forged: [string, Parameters<typeof send>[3]][] = [
      ['foreign Origin', { origin: 'https://evil.example' }],
      ['foreign Referer, no Origin', { origin: null, headers: { referer: 'https://evil.example/page' } }],
      ['Origin null', { origin: 'null' }],
      ['no Origin or Referer', { origin: null }],
      ['Sec-Fetch-Site: cross-site', { headers: { 'sec-fetch-site': 'cross-site' } }],
      ['Sec-Fetch-Site: same-site', { headers: { 'sec-fetch-site': 'same-site' } }],
      ['a simple form post (text/plain, no console header)', { raw: '{}', headers: { 'content-type': 'text/plain', 'x-leasehold-request': '' } }],
      ['a look-alike host', { origin: 'http://console.test.evil.example' }],
    ];
    for (const [what, s] of forged) {
      for (const [path, params, body] of [
        ['/api/jobs/{id}/requeue', { id: target }, {}],
        ['/api/actions/{action}', { action: 'requeue' }, { ids: [target] }],
        ['/api/queues/{name}', { name: 'auth-q' }, { paused: true }],
        ['/api/recover', {}, {}],
        ['/api/jobs', {}, { type: 'demo.noop' }],
        ['/api/views', {}, { name: 'Forged', page: 'jobs', query: '' }],
      ] as const) {
        const res = await send(routes, 'POST', path, { params, body, ...s, cookie: admin });
        assert.equal(res.status, 403, `${what}: ${path} → ${res.status}`);
        assert.equal((await res.json()).error.code, 'csrf', what);
      }
    }
    // sign-in itself refuses a cross-site post (login CSRF)
    assert.equal((await send(routes, 'POST', '/api/auth/signin', { body: { name: 'ada', password: 'ada-password-123' }, origin: 'https://evil.example' })).status, 403);
    assert.equal(await stateOf(db.pool), before);
    // the same request from the console's own origin works
    assert.equal((await send(routes, 'POST', '/api/jobs/{id}/requeue', { params: { id: target }, body: {}, cookie: admin })).status, 200);
  });

  test('X-Forwarded-Host counts only behind a declared proxy (LEASEHOLD_TRUST_PROXY=1), and then only its last entry, the one the proxy appended', async () => {
    const saved = process.env.LEASEHOLD_TRUST_PROXY;
    const target = await insertJob(db.pool, { status: 'failed' });
    const requeue = (origin: string, headers: Record<string, string>) =>
      send(routes, 'POST', '/api/jobs/{id}/requeue', { params: { id: target }, body: {}, cookie: admin, origin, headers });
    try {
      delete process.env.LEASEHOLD_TRUST_PROXY;
      const before = await stateOf(db.pool);
      // A forged page's request (or one a client makes up) whose Origin matches only the
      // X-Forwarded-Host it sent itself: without a declared proxy that header is the client's word.
      for (const xfh of ['evil.example', 'evil.example, console.test']) {
        const res = await requeue('https://evil.example', { 'x-forwarded-host': xfh });
        assert.equal(res.status, 403, `X-Forwarded-Host ${xfh}`);
        assert.equal((await res.json()).error.code, 'csrf');
      }
      assert.equal(await stateOf(db.pool), before);

      process.env.LEASEHOLD_TRUST_PROXY = '1';
      // Behind the proxy the Host is its upstream address; the host the browser asked for is
      // the entry the proxy appended, and a client-sent one before it counts for nothing.
      const forged = await requeue('https://evil.example', { host: '127.0.0.1:3000', 'x-forwarded-host': 'evil.example, console.test' });
      assert.equal(forged.status, 403);
      assert.equal(await stateOf(db.pool), before);
      const ok = await requeue('http://console.test', { host: '127.0.0.1:3000', 'x-forwarded-host': 'evil.example, console.test' });
      assert.equal(ok.status, 200);
    } finally {
      if (saved === undefined) delete process.env.LEASEHOLD_TRUST_PROXY;
      else process.env.LEASEHOLD_TRUST_PROXY = saved;
    }
  });

  test('a bearer token is not subject to the origin checks (it carries no ambient credentials)', async () => {
    const { token } = await tokenCreate(db.pool, { name: 'ops-script', scope: 'operator', createdBy: 'test' });
    const target = await insertJob(db.pool, { status: 'failed' });
    const res = await send(routes, 'POST', '/api/jobs/{id}/requeue', { params: { id: target }, bearer: token, origin: null });
    assert.equal(res.status, 200);
  });

  test("another Authorization scheme (a proxy's HTTP Basic sign-in) leaves the session cookie in charge, origin checks included", async () => {
    const basic = { authorization: 'Basic YWRtaW46YWRtaW4=' };
    const target = await insertJob(db.pool, { status: 'failed' });
    const me = await send(routes, 'GET', '/api/auth/me', { cookie: viewer, headers: basic });
    assert.equal(me.status, 200);
    assert.equal((await me.json()).name, 'vera');
    const before = await stateOf(db.pool);
    const forged = await send(routes, 'POST', '/api/jobs/{id}/requeue', { params: { id: target }, body: {}, cookie: admin, origin: 'https://evil.example', headers: basic });
    assert.equal(forged.status, 403);
    assert.equal((await forged.json()).error.code, 'csrf');
    assert.equal(await stateOf(db.pool), before);
    assert.equal((await send(routes, 'POST', '/api/jobs/{id}/requeue', { params: { id: target }, body: {}, cookie: admin, headers: basic })).status, 200);
    // A Bearer header is the credential, even beside a valid cookie: a malformed one is a 401.
    const bad = await send(routes, 'GET', '/api/auth/me', { cookie: viewer, headers: { authorization: 'Bearer' } });
    assert.equal(bad.status, 401);
    assert.match((await bad.json()).error.message, /token is invalid/);
  });
});

describe('API tokens', () => {
  test('an enqueue token enqueues and does nothing else; revoked, it stops working at once', async () => {
    const { token, info } = await tokenCreate(db.pool, { name: 'producer', scope: 'enqueue', createdBy: 'test' });
    const ok = await send(routes, 'POST', '/api/jobs', { bearer: token, body: { type: 'demo.noop', queue: 'tok' }, origin: null });
    assert.equal(ok.status, 202);
    assert.equal((await send(routes, 'GET', '/api/jobs', { bearer: token })).status, 403);
    assert.equal((await send(routes, 'POST', '/api/jobs/{id}/requeue', { bearer: token, params: { id: failed } })).status, 403);
    await tokenRevoke(db.pool, info.id);
    const before = await stateOf(db.pool);
    const res = await send(routes, 'POST', '/api/jobs', { bearer: token, body: { type: 'demo.noop', queue: 'tok' }, origin: null });
    assert.equal(res.status, 401);
    assert.match((await res.json()).error.message, /revoked/);
    assert.equal(await stateOf(db.pool), before);
    const { rows } = await db.pool.query(`SELECT token_hash FROM api_tokens WHERE token_id = $1`, [info.id]);
    assert.ok(!rows[0].token_hash.includes(token.slice(3)), 'only a hash is stored');
  });

  test("a job that kills its worker process (demo.sleep with crash) is an operator's to enqueue, not an enqueue token's", async () => {
    const { token } = await tokenCreate(db.pool, { name: 'producer-2', scope: 'enqueue', createdBy: 'test' });
    const crash = { type: 'demo.sleep', queue: 'tok', payload: { ms: 0, crash: true } };
    const before = await stateOf(db.pool);
    for (const body of [crash, [{ type: 'demo.noop', queue: 'tok' }, crash]]) {
      const res = await send(routes, 'POST', '/api/jobs', { bearer: token, body, origin: null });
      assert.equal(res.status, 403);
      const { error } = await res.json();
      assert.equal(error.code, 'forbidden');
      assert.match(error.message, /^(\[1\]\.)?payload: crash: true kills the worker process .* needs the operator role/);
    }
    assert.equal(await stateOf(db.pool), before, "nothing enqueued, the batch's other job included");
    const sleepy = await send(routes, 'POST', '/api/jobs', { bearer: token, body: { ...crash, payload: { ms: 0 } }, origin: null });
    assert.equal(sleepy.status, 202, 'without crash it is any job');
    assert.equal((await send(routes, 'POST', '/api/jobs', { cookie: operator, body: crash })).status, 202, 'an operator may');
  });
});

describe('live streams', () => {
  test(`one user holds at most ${MAX_LIVE_STREAMS_PER_VIEWER} live streams (then 429: the page polls); others still get theirs`, async () => {
    const lena = await session('lena', 'viewer');
    const olga = await session('olga', 'viewer');
    const held: AbortController[] = [];
    const stream = async (cookie: string) => {
      const ac = new AbortController();
      const res = await send(routes, 'GET', '/api/live', { cookie, query: 'stats=1&every=60000', signal: ac.signal });
      if (res.status === 200) held.push(ac);
      else ac.abort();
      return res;
    };
    try {
      for (let k = 0; k < MAX_LIVE_STREAMS_PER_VIEWER; k++) assert.equal((await stream(lena)).status, 200, `stream ${k + 1}`);
      const refused = await stream(lena);
      assert.equal(refused.status, 429);
      assert.deepEqual((await refused.json()).error, { code: 'rate_limited', message: `you hold ${MAX_LIVE_STREAMS_PER_VIEWER} live streams on this console already; poll instead` });
      // When one of hers has ended at the latest: its 60 s, then its next tick (60 s apart).
      const retryAfter = Number(refused.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter > 60 && retryAfter <= 120, `Retry-After: ${refused.headers.get('retry-after')}`);
      assert.equal((await stream(olga)).status, 200, 'another user is not held back');
      const before = openLiveStreams();
      held.shift()!.abort();
      await waitFor('the aborted stream to close', () => openLiveStreams() === before - 1);
      assert.equal((await stream(lena)).status, 200, 'a closed stream frees its place');
    } finally {
      for (const ac of held) ac.abort();
    }
  });
});

describe('sessions', () => {
  test('sign-in sets an httpOnly SameSite=Lax cookie (Secure behind HTTPS); sign-out ends the session on the server', async () => {
    await userAdd(db.pool, { name: 'sam', role: 'viewer', password: 'sam-password-123' });
    const res = await send(routes, 'POST', '/api/auth/signin', { body: { name: 'sam', password: 'sam-password-123' } });
    assert.equal(res.status, 200);
    const cookie = res.headers.get('set-cookie')!;
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.doesNotMatch(cookie, /Secure/);
    const sid = decodeURIComponent(/leasehold_session=([^;]+)/.exec(cookie)![1]!);
    assert.equal((await send(routes, 'GET', '/api/auth/me', { cookie: sid })).status, 200);
    const https = await send(routes, 'POST', '/api/auth/signin', {
      body: { name: 'sam', password: 'sam-password-123' },
      origin: 'https://console.test',
      headers: { 'x-forwarded-proto': 'https' },
    });
    assert.match(https.headers.get('set-cookie')!, /; Secure/);
    const out = await send(routes, 'POST', '/api/auth/signout', { cookie: sid });
    assert.equal(out.status, 200);
    assert.match(out.headers.get('set-cookie')!, /Max-Age=0/);
    assert.equal((await send(routes, 'GET', '/api/auth/me', { cookie: sid })).status, 401, 'the old cookie no longer works');
  });

  test('sign-in attempts are limited per account (and the right password does not get round it)', async () => {
    await userAdd(db.pool, { name: 'rita', role: 'viewer', password: 'rita-password-123' });
    const attempt = (password: string, ip = '203.0.113.7') =>
      send(routes, 'POST', '/api/auth/signin', { body: { name: 'rita', password }, headers: { [PEER_HEADER]: ip } });
    for (let k = 0; k < 10; k++) assert.equal((await attempt(`guess-${k}`)).status, 401);
    const blocked = await attempt('rita-password-123', '198.51.100.9');
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    assert.equal((await blocked.json()).error.code, 'rate_limited');
  });

  test('guesses sent all at once are limited like guesses sent one by one', async () => {
    await userAdd(db.pool, { name: 'burst', role: 'viewer', password: 'burst-password-123' });
    const answers = await Promise.all(
      Array.from({ length: 3 * MAX_PER_ACCOUNT }, (_, k) =>
        send(routes, 'POST', '/api/auth/signin', { body: { name: 'burst', password: `guess-${k}` }, headers: { [PEER_HEADER]: `203.0.113.${100 + k}` } }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 401).length, MAX_PER_ACCOUNT, `passwords checked: ${statuses.join(' ')}`);
    assert.equal(statuses.filter((s) => s === 429).length, 2 * MAX_PER_ACCOUNT);
  });

  test('a setup request that is no guess (an invalid name) does not clear the wrong links counted before it; other addresses are not held up', async () => {
    const setup = (body: object, address: string) => send(routes, 'POST', '/api/auth/setup', { body, headers: { [PEER_HEADER]: address } });
    let wrong = 0;
    for (let k = 0; k < 3 * MAX_PER_ADDRESS; k++) {
      const r = await setup({ token: `wrong-link-${k}`, name: 'mallory', password: 'mallory-password' }, '198.51.100.7');
      if (r.status === 429) {
        assert.ok(Number(r.headers.get('retry-after')) > 0, 'says when to try again, as a sign-in does');
        break;
      }
      assert.equal(r.status, 403);
      wrong++;
      // Refused as invalid (400), or as blocked once the wrong links reached the limit (429).
      assert.ok([400, 429].includes((await setup({ token: 'any-link-token', name: '!x', password: 'mallory-password' }, '198.51.100.7')).status));
    }
    assert.ok(wrong <= MAX_PER_ADDRESS, `${wrong} wrong links were checked before the address was blocked`);
    // The link is 256 random bits: wrong ones from one address must not keep the real one out elsewhere.
    assert.equal((await setup({ token: 'wrong-link-elsewhere', name: 'mallory', password: 'mallory-password' }, '198.51.100.8')).status, 403);
  });

  test('a right password takes its attempt back: it does not count against the address', async () => {
    await userAdd(db.pool, { name: 'regular', role: 'viewer', password: 'regular-password-1' });
    const from = { [PEER_HEADER]: '192.0.2.200' };
    for (let k = 0; k < MAX_PER_ADDRESS + 5; k++) {
      const r = await send(routes, 'POST', '/api/auth/signin', { body: { name: 'regular', password: 'regular-password-1' }, headers: from });
      assert.equal(r.status, 200, `sign-in ${k + 1}`);
    }
  });

  test("setting a user's password again ends their sessions", async () => {
    await userAdd(db.pool, { name: 'leaked', role: 'operator', password: 'leaked-password-1' });
    const s = await send(routes, 'POST', '/api/auth/signin', { body: { name: 'leaked', password: 'leaked-password-1' } });
    const sid = decodeURIComponent(/leasehold_session=([^;]+)/.exec(s.headers.get('set-cookie')!)![1]!);
    assert.equal((await send(routes, 'GET', '/api/auth/me', { cookie: sid })).status, 200);
    await userAdd(db.pool, { name: 'leaked', role: 'operator', password: 'a-new-password-2', replace: true });
    assert.equal((await send(routes, 'GET', '/api/auth/me', { cookie: sid })).status, 401, 'the session from before the reset no longer works');
    const again = await send(routes, 'POST', '/api/auth/signin', { body: { name: 'leaked', password: 'a-new-password-2' } });
    assert.equal(again.status, 200);
  });

  test('a sign-in whose password check straddles a reset gets no session', async () => {
    await userAdd(db.pool, { name: 'straddle', role: 'viewer', password: 'old-password-123' });
    const checked = (await userVerify(db.pool, 'straddle', 'old-password-123'))!; // the scrypt's time
    await userAdd(db.pool, { name: 'straddle', role: 'viewer', password: 'new-password-456', replace: true });
    await assert.rejects(sessionCreate(db.pool, checked.id, { passwordHash: checked.passwordHash }), (e: Error & { code?: string }) => e.code === 'unauthorized');
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM sessions WHERE user_id = $1`, [checked.id])).rows[0].n, 0);
  });

  test('sign-in attempts are limited per address, and a client-sent X-Forwarded-For does not get round it', async () => {
    const attempt = (name: string, k: number) =>
      send(routes, 'POST', '/api/auth/signin', {
        body: { name, password: 'wrong-password-1' },
        headers: { [PEER_HEADER]: '192.0.2.77', 'x-forwarded-for': `198.18.0.${k % 250}`, 'x-real-ip': `198.19.0.${k % 250}` },
      });
    for (let k = 0; k < MAX_PER_ADDRESS; k++) assert.equal((await attempt(`sprayed-${k}`, k)).status, 401);
    assert.equal((await attempt('yet-another-name', 999)).status, 429);
  });

  test('an unknown name and a wrong password get the same answer', async () => {
    const a = await send(routes, 'POST', '/api/auth/signin', { body: { name: 'nobody-here', password: 'whatever-123' } });
    const b = await send(routes, 'POST', '/api/auth/signin', { body: { name: 'vera', password: 'whatever-123' } });
    assert.equal(a.status, 401);
    assert.deepEqual(await a.json(), await b.json());
  });
});
