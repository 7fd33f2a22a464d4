/**
 * Shared by the browser tests: the e2e database (to put rows in any state and to wait
 * on them), the API, and screenshots for the README (docs/screenshots/*.png).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, type APIRequestContext, type Page } from '@playwright/test';
import pg from 'pg';
import { e2eDatabaseUrl } from './env';

let pool: pg.Pool | null = null;
export function db(): pg.Pool {
  if (!pool) {
    pool = new pg.Pool({ connectionString: e2eDatabaseUrl(), max: 3 });
    pool.on('error', () => {});
  }
  return pool;
}
export async function closeDb() {
  await pool?.end();
  pool = null;
}

export async function jobRow(id: string) {
  const { rows } = await db().query('SELECT * FROM jobs WHERE job_id = $1', [id]);
  return rows[0];
}

export const jobStatus = async (id: string) => (await jobRow(id))?.status as string | undefined;

/** Enqueue through the public API; returns the id. */
export async function enqueue(request: APIRequestContext, body: Record<string, unknown>): Promise<string> {
  const res = await request.post('/api/jobs', { data: body });
  expect(res.status(), await res.text()).toBe(202);
  return (await res.json()).id;
}

/** Waits (polling the database, no fixed sleeps) until the job has this status. */
export async function waitForStatus(id: string, status: string | string[], timeout = 30_000) {
  const want = Array.isArray(status) ? status : [status];
  await expect
    .poll(async () => (await jobStatus(id)) ?? 'missing', { timeout, message: `job ${id} to become ${want.join(' or ')}` })
    .toMatch(new RegExp(`^(${want.join('|')})$`));
}

/** Cancel whatever the test left running (long demo.sleep jobs hold worker slots). */
export async function cancelQuietly(request: APIRequestContext, id: string) {
  await request.post(`/api/jobs/${id}/cancel`).catch(() => {});
}

const SHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
export async function screenshot(page: Page, name: string, opts: { fullPage?: boolean } = {}) {
  // These specs run against the LEASEHOLD_AUTH=off console; the README's pictures show the
  // console as operators see it with sign-in on, so the AUTH OFF banner is left out of them.
  await page.addStyleTag({ content: '[data-testid="auth-off-banner"]{display:none !important}' }).catch(() => {});
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: opts.fullPage ?? false, animations: 'disabled' });
}

/** The number in a countdown like "9 s" or "1 min 2 s". */
export const seconds = (text: string) => {
  const m = /(?:(\d+) min)?\s*(?:(\d+) s)?/.exec(text.trim());
  return Number(m?.[1] ?? 0) * 60 + Number(m?.[2] ?? 0);
};

/** A status count card's number on the overview ("≈" / "≥" / thousands separators stripped). */
export const statusCount = async (page: Page, status: string) =>
  Number((await page.getByTestId(`count-value-${status}`).innerText()).replace(/[^0-9]/g, ''));
