/**
 * Closed by default, through the real server with sign-in on: every console page without a
 * session is redirected to /signin (and the sign-in pages themselves open), and every API
 * route file answers 401 to every method it exports, except the few open ones; nothing changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '../test';
import { findRouteFiles, HTTP_METHODS } from '../../api-routes';
import { root } from '../../processes';
import { closeDb, db } from '../helpers';

test.afterAll(closeDb);

/** app/jobs/[id]/page.tsx → /jobs/1 */
function pages(dir = path.join(root, 'app')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'api' ? [] : pages(full);
    if (e.name !== 'page.tsx') return [];
    const rel = path.relative(path.join(root, 'app'), path.dirname(full));
    return ['/' + rel.split(path.sep).filter(Boolean).map((s) => (s.startsWith('[') ? '1' : s)).join('/')];
  });
}

const OPEN_PAGES = ['/signin', '/setup'];
const OPEN_API = new Set(['GET /api/health', 'GET /api/openapi.json', 'POST /api/auth/signin', 'POST /api/auth/signout', 'POST /api/auth/setup']);

const snapshot = async () =>
  (
    await db().query(`SELECT (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY job_id), '')) FROM jobs t) AS jobs,
                             (SELECT count(*) FROM audit_log) AS audit, (SELECT count(*) FROM users) AS users,
                             (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY name), '')) FROM queues t) AS queues`)
  ).rows[0];

test('every page redirects to sign-in without a session; every API route answers 401; nothing changes', async ({ request }) => {
  const list = pages();
  expect(list.length).toBeGreaterThanOrEqual(8);
  for (const p of list) {
    const res = await request.get(p, { maxRedirects: 0 });
    if (OPEN_PAGES.includes(p)) expect(res.status(), p).toBe(200);
    else {
      expect(res.status(), p).toBe(307);
      expect(res.headers()['location'], p).toMatch(/\/signin(\?|$)/);
    }
  }
  const before = await snapshot();
  const routes = findRouteFiles();
  expect(routes.length).toBeGreaterThanOrEqual(20);
  for (const r of routes) {
    const mod = fs.readFileSync(path.join(root, r.file), 'utf8');
    const url = r.path.replace(/\{(\w+)\}/g, (_, k) => (k === 'action' ? 'requeue' : k === 'name' ? 'default' : '1'));
    for (const m of HTTP_METHODS) {
      if (!new RegExp(`export const ${m}\\b`).test(mod)) continue;
      if (OPEN_API.has(`${m} ${r.path}`)) continue;
      const res = await request.fetch(url, { method: m, data: m === 'GET' ? undefined : { ids: ['1'], paused: true, type: 'demo.noop' }, maxRedirects: 0 });
      expect(res.status(), `${m} ${url}`).toBe(401);
      expect((await res.json()).error.code, `${m} ${url}`).toBe('unauthorized');
    }
  }
  expect(await snapshot()).toEqual(before);
});

test('with LEASEHOLD_AUTH=off (the other console of this run) every page says so loudly', async ({ page }) => {
  await page.goto(`http://127.0.0.1:${process.env.E2E_PORT ?? 3210}/jobs`);
  await expect(page.getByTestId('auth-off-banner')).toContainText(/auth off — local demo only/i);
});
