/**
 * Hostile requests through the real HTTP server (Next's routing and body handling in front of
 * the handlers; app/api/hostile.db.test.ts sends 575 more straight to the handlers): no 5xx,
 * every API error is {"error":{"code","message"}}, and nothing changes.
 */
import { expect, test } from '../test';
import { tokenCreate, tokenRevoke } from '../../../lib/auth/store';
import { closeDb, db } from '../helpers';

let tokenId: string | null = null;
test.afterAll(async () => {
  if (tokenId) await tokenRevoke(db(), tokenId);
  await closeDb();
});

const fingerprint = async () =>
  (await db().query(`SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY job_id), '')) AS h, count(*) AS n FROM jobs t`)).rows[0];

test('hostile HTTP requests: no 5xx, well-formed errors, no job changed', async ({ request }) => {
  const { token, info } = await tokenCreate(db(), { name: 'e2e-hostile', scope: 'admin', createdBy: 'e2e' });
  tokenId = info.id;
  const auth = { authorization: `Bearer ${token}` };
  // The requests below reach the handlers, not just the sign-in gate.
  expect((await request.get('/api/jobs?limit=1', { headers: auth })).status()).toBe(200);
  const before = await fingerprint();
  const paths = [
    '/api/jobs/..%2F..%2Fetc%2Fpasswd',
    '/api/jobs/%2e%2e/%2e%2e/etc/passwd',
    '/api/jobs/1%00',
    '/api/jobs/%E0%A4%A',
    '/api/jobs/%ED%A0%80',
    '/api/jobs/99999999999999999999999',
    '/api/jobs/1/result/../../../../etc/passwd',
    '/api/jobs?status=%27%20OR%201%3D1--',
    '/api/jobs?limit=1e9',
    '/api/jobs?queue=%ED%A0%80',
    '/api/jobs?cursor=-1',
    '/api/jobs?payload=a.b%3D%27%3BDROP%20TABLE%20jobs',
    '/api/audit?jobId=1%20OR%201=1',
    '/api/jobs/lookup?ids=' + '1,'.repeat(5000),
  ];
  const problems: string[] = [];
  /** A 4xx from the API must carry {"error":{"code","message"}} (Next's own 404 page for a path no route has is HTML). */
  const checkErrorBody = async (what: string, res: Awaited<ReturnType<typeof request.get>>) => {
    if (res.status() < 400 || !(res.headers()['content-type'] ?? '').includes('json')) return;
    const j = (await res.json().catch(() => null)) as { error?: { code?: unknown; message?: unknown } } | null;
    if (typeof j?.error?.code !== 'string' || typeof j?.error?.message !== 'string') problems.push(`${what} → ${res.status()} not an error body`);
  };
  for (const p of paths) {
    const res = await request.get(p, { headers: auth });
    if (res.status() >= 500) problems.push(`GET ${p} → ${res.status()}`);
    else await checkErrorBody(`GET ${p}`, res);
  }
  const posts: [string, string | Buffer, string][] = [
    ['/api/jobs', '{"type":', 'application/json'],
    ['/api/jobs', Buffer.alloc(3 * 1024 * 1024, 'a'), 'application/json'],
    ['/api/jobs', JSON.stringify({ type: 'demo.noop', payload: { s: 'x'.repeat(1024 * 1024 + 1) } }), 'application/json'],
    ['/api/jobs', Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), 'application/json'],
    ['/api/jobs', 'type=demo.noop', 'application/x-www-form-urlencoded'],
    ['/api/actions/..%2F..%2Fadmin', '{"ids":["1"]}', 'application/json'],
    ['/api/queues/%E0%A4%A', '{"paused":true}', 'application/json'],
    ['/api/queues/..%2F..', '{"paused":"yes"}', 'application/json'],
    ['/api/jobs/1/requeue', '[]', 'application/json'],
    ['/api/recover', '{"ids":["\'; DROP TABLE jobs;--"]}', 'application/json'],
  ];
  for (const [p, body, type] of posts) {
    const res = await request.post(p, { headers: { ...auth, 'content-type': type }, data: body });
    if (res.status() >= 500) problems.push(`POST ${p} → ${res.status()}`);
    else await checkErrorBody(`POST ${p}`, res);
  }
  expect(problems).toEqual([]);
  expect(await fingerprint()).toEqual(before);
});

test('a query string that is not valid percent-encoded UTF-8 is a 400 that says so, not a search for U+FFFD', async ({ request }) => {
  const { token, info } = await tokenCreate(db(), { name: 'e2e-hostile-query', scope: 'viewer', createdBy: 'e2e' });
  try {
    const auth = { authorization: `Bearer ${token}` };
    for (const p of ['/api/jobs?queue=%E9', '/api/jobs?q=%', '/api/jobs?worker=%ED%A0%80', '/api/audit?actor=%E9', '/api/jobs/export?queue=%E9', '/api/jobs?%E9=1']) {
      const res = await request.get(p, { headers: auth });
      expect(res.status(), p).toBe(400);
      expect(await res.json(), p).toEqual({ error: { code: 'invalid_request', message: 'the query string is not valid percent-encoded UTF-8' } });
    }
    // Well-formed escapes, '+' for a space included, are read as before.
    expect((await request.get('/api/jobs?queue=caf%C3%A9+bar&limit=1', { headers: auth })).status()).toBe(200);
    // Past Node's header limit (16 KB, the URL counted): refused before Next, in the API's shape, not a bare 431.
    const long = await request.get(`/api/jobs?queue=${'q'.repeat(17_000)}`, { headers: auth });
    expect(long.status()).toBe(431);
    expect((await long.json()).error.code).toBe('payload_too_large');
    expect((await request.get('/api/jobs?limit=1', { headers: auth })).status()).toBe(200);
  } finally {
    await tokenRevoke(db(), info.id);
  }
});
