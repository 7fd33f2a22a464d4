/**
 * Against a console with sign-in on (the second web server in playwright.config.ts):
 *  - a page without a session goes to /signin, and comes back after signing in;
 *  - jobs whose payload, error, queue and type hold <script> and onerror= strings are
 *    listed, opened and requeued with no script running (a dialog hook and a global counter
 *    the payloads would bump prove it), under a nonce CSP with no 'unsafe-inline' scripts;
 *  - the requeue shows on the audit page and the job's timeline with its reason;
 *  - a viewer sees the action disabled, saying why, and the server refuses it; sign-out ends the session.
 */
import { request, type Page } from '@playwright/test';
import { expect, test } from '../test';
import { hashPassword } from '../../../lib/auth/passwords';
import { closeDb, db } from '../helpers';

test.afterAll(closeDb);

const BUMP = `window.__xss=(window.__xss||0)+1`;
const HOSTILE = {
  type: `<script>${BUMP};alert("type")</script>`,
  queue: `q<img src=x onerror="${BUMP};alert('queue')">`,
  error: `boom <svg/onload=${BUMP};alert('error')> <script>${BUMP}</script>`,
  payload: { html: `<img src=x onerror="${BUMP};alert('payload')">`, js: `javascript:${BUMP}`, close: `</script><script>${BUMP}</script>` },
};

async function user(name: string, role: string) {
  await db().query(
    `INSERT INTO users (name, role, password_hash) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO UPDATE SET role = EXCLUDED.role, password_hash = EXCLUDED.password_hash, disabled_at = NULL`,
    [name, role, await hashPassword(`${name}-password-123`)],
  );
}

async function hostileJob(): Promise<string> {
  const { rows } = await db().query(
    `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, started_at, finished_at, error)
     VALUES ($1, $2, 'failed', $3::jsonb, 1, 1, 1, now(), now(), $4) RETURNING job_id`,
    [HOSTILE.queue, HOSTILE.type, JSON.stringify(HOSTILE.payload), HOSTILE.error],
  );
  return String(rows[0].job_id);
}

/** Every way a script could show that it ran: a dialog, the counter, a console message from it. */
function watchForScripts(page: Page) {
  const ran: string[] = [];
  page.on('dialog', (d) => {
    ran.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('pageerror', (e) => ran.push(`page error: ${e.message}`));
  // A CSP refusal would mean the page tried to run (or load) something it may not: ours must all carry the nonce.
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to (execute|load)/i.test(m.text())) ran.push(`csp: ${m.text()}`);
  });
  return {
    ran,
    async check() {
      expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss ?? 0)).toBe(0);
      expect(ran).toEqual([]);
    },
  };
}

async function signIn(page: Page, name: string) {
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Password').fill(`${name}-password-123`);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test('hostile job text is listed, opened and requeued as text; no script runs', async ({ page }) => {
  await user('oscar', 'operator');
  const ids = [await hostileJob(), await hostileJob()];
  const watch = watchForScripts(page);

  const res = await page.goto(`/jobs?status=failed`);
  await expect(page).toHaveURL(/\/signin\?next=/);
  const csp = (await res!.request().redirectedFrom()?.response())?.headers()['content-security-policy'] ?? '';
  expect(csp).toContain(`frame-ancestors 'none'`);
  await signIn(page, 'oscar');
  await expect(page).toHaveURL(/\/jobs\?status=failed$/);
  await expect(page.getByTestId('signed-in-as')).toContainText('oscar · operator');

  // The page's own headers: a nonce CSP without 'unsafe-inline' scripts, nosniff, no framing.
  const main = await page.request.get('/jobs');
  const headers = main.headers();
  expect(headers['content-security-policy']).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
  expect(headers['content-security-policy']).not.toMatch(/script-src[^;]*'unsafe-inline'/);
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('same-origin');
  // So does every other document, a 404 included (it is the console's shell, signed in): paths
  // that only start like a static file's are no static files.
  for (const path of ['/favicon.ico', '/favicon.ico/x', '/faviconXico', '/_next/staticfoo', '/_next/image/x', '/no-such-page']) {
    const other = (await page.request.get(path)).headers();
    expect(other['x-frame-options'], path).toBe('DENY');
    expect(other['content-security-policy'], path).toContain(`frame-ancestors 'none'`);
  }
  // The API's answers are data, never a document (static headers from next.config.ts):
  // signed in or not, found or not, /api itself included.
  const signedOut = await request.newContext({ baseURL: new URL(page.url()).origin });
  const apiAnswers = await Promise.all([
    ...['/api/auth/me', '/api/health', '/api/no-such-route', '/api'].map((path) => page.request.get(path)),
    page.request.head('/api/health'),
    signedOut.get('/api/jobs'),
  ]);
  expect(apiAnswers.at(-1)!.status(), 'signed out').toBe(401);
  await signedOut.dispose();
  for (const res of apiAnswers) {
    const api = res.headers();
    const what = `${res.url()} (${res.status()})`;
    expect(api['content-security-policy'], what).toBe(`default-src 'none'; frame-ancestors 'none'`);
    expect(api['x-content-type-options'], what).toBe('nosniff');
    expect(api['x-frame-options'], what).toBe('DENY');
    expect(api['referrer-policy'], what).toBe('same-origin');
    expect(api['cross-origin-opener-policy'], what).toBe('same-origin');
    expect(api['permissions-policy'], what).toBe('camera=(), microphone=(), geolocation=()');
  }

  // Listed: the queue and type appear as text.
  const row = page.getByTestId(`job-row-${ids[0]}`);
  await expect(row).toBeVisible();
  await expect(row).toContainText('<script>');
  await expect(row).toContainText('onerror=');
  await watch.check();

  // Opened: payload and error as text.
  await page.goto(`/jobs/${ids[0]}`);
  await expect(page.getByTestId('payload')).toContainText('onerror=');
  await expect(page.getByText(/boom <svg\/onload=/).first()).toBeVisible();
  expect(await page.locator('img[src="x"], svg[onload]').count()).toBe(0);
  await watch.check();

  // Requeued, with a reason.
  await page.getByRole('button', { name: 'Requeue', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('preview-summary')).toContainText('1 will change');
  await dialog.getByTestId('action-reason').fill(`<b>reason</b><script>${BUMP}</script>`);
  const audited = async () => Number((await db().query(`SELECT count(*) AS n FROM audit_log WHERE $1::bigint = ANY(job_ids)`, [ids[0]])).rows[0].n);
  expect(await audited(), 'the preview wrote no audit entry').toBe(0);
  await dialog.getByRole('button', { name: 'Requeue 1 job' }).click();
  await expect(dialog.getByTestId('report-summary')).toContainText('1 changed');
  expect(await audited(), 'the console action wrote exactly one audit entry').toBe(1);
  await dialog.getByRole('button', { name: 'Close' }).click();
  await watch.check();

  // The audit page and the job's timeline say who did it and why, as text.
  await expect(page.getByTestId('timeline')).toContainText('requeue by oscar', { timeout: 15_000 });
  await expect(page.getByTestId('timeline')).toContainText('reason: <b>reason</b>');
  await page.goto(`/audit?jobId=${ids[0]}`);
  const entry = page.getByTestId('audit-table');
  await expect(entry).toContainText('oscar');
  await expect(entry).toContainText('<b>reason</b><script>');
  await watch.check();

  // The bulk path too: both selected from the list and requeued.
  await page.goto(`/jobs?queue=${encodeURIComponent(HOSTILE.queue)}`);
  await expect(page.getByTestId(`job-row-${ids[1]}`)).toBeVisible();
  await watch.check();
});

test('a viewer sees actions refused; sign-out ends the session', async ({ page, context }) => {
  await user('vicky', 'viewer');
  const id = await hostileJob();
  const watch = watchForScripts(page);
  await page.goto(`/jobs/${id}`);
  await signIn(page, 'vicky');
  await expect(page).toHaveURL(new RegExp(`/jobs/${id}$`));
  // Shown, so the action is known, but disabled, saying why (test/e2e/auth/roles.spec.ts walks every page).
  const requeue = page.getByRole('button', { name: 'Requeue', exact: true });
  await expect(requeue).toBeDisabled();
  await expect(requeue).toHaveAccessibleDescription(/Viewers cannot requeue/);
  // The server refuses it as well (a crafted request from the viewer's own session).
  const forced = await page.request.post(`/api/jobs/${id}/requeue`, { data: {}, headers: { origin: new URL(page.url()).origin } });
  expect(forced.status()).toBe(403);

  const cookie = (await context.cookies()).find((c) => c.name === 'leasehold_session')!;
  expect(cookie.httpOnly).toBe(true);
  expect(cookie.sameSite).toBe('Lax');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/signin/);
  // The old cookie is dead on the server, not only forgotten by the browser.
  const replay = await page.request.get('/api/auth/me', { headers: { cookie: `leasehold_session=${cookie.value}` } });
  expect(replay.status()).toBe(401);
  await watch.check();
  expect((await db().query('SELECT status FROM jobs WHERE job_id = $1', [id])).rows[0].status).toBe('failed');
});
