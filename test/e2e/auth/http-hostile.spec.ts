/**
 * Hostile requests through the real HTTP server (Next's routing and body handling in front of
 * the handlers; app/api/hostile.db.test.ts sends 575 more straight to the handlers): no 5xx,
 * every API error is {"error":{"code","message"}}, and nothing changes.
 */
import { createHash, randomBytes } from 'node:crypto';
import { expect, test } from '@playwright/test';
import { closeDb, db } from '../helpers';

test.afterAll(closeDb);

const fingerprint = async () =>
  (await db().query(`SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY job_id), '')) AS h, count(*) AS n FROM jobs t`)).rows[0];

test('hostile HTTP requests: no 5xx, well-formed errors, no job changed', async ({ request }) => {
  const token = `lh_${randomBytes(24).toString('base64url')}`;
  await db().query(`INSERT INTO api_tokens (name, token_hash, scope, created_by) VALUES ('e2e-hostile', $1, 'admin', 'e2e')`, [
    createHash('sha256').update(token).digest('hex'),
  ]);
  const auth = { authorization: `Bearer ${token}` };
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
  for (const p of paths) {
    const res = await request.get(p, { headers: auth });
    if (res.status() >= 500) problems.push(`GET ${p} → ${res.status()}`);
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
    else if (res.status() >= 400 && p.startsWith('/api/') && res.status() !== 404) {
      const j = await res.json().catch(() => null);
      if (typeof j?.error?.code !== 'string') problems.push(`POST ${p} → ${res.status()} not an error body`);
    }
  }
  expect(problems).toEqual([]);
  expect(await fingerprint()).toEqual(before);
});
