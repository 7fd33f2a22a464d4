/**
 * Long user text (an error of thousands of characters with no space in it, a queue name of
 * 200 characters, a long reason) next to short names, at a laptop's 1280 px and a phone's
 * 390 px. A table cell that may break anywhere has a min-content width of one character,
 * so without a floor of its own the long text beside it squeezed it: `payment.capture` read
 * as `paymen t.captu re` in the dead letter at 1280 px, the audit log's `Who` broke
 * mid-name, and at 390 px every job's owner and error were a few characters wide (rows
 * hundreds of pixels tall); a job's "no live worker serves queue …" notice ran off the page.
 * Here the short names stay on one line, the squeezed columns keep a readable width, and
 * no page scrolls sideways (a table may, inside its own frame).
 */
import type { Locator, Page } from '@playwright/test';
import { expect, test } from './test';
import { closeDb, db } from './helpers';

test.afterAll(closeDb);

const LAPTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

/** How many lines the text takes: an inline box broken over lines has one rectangle per line. */
const lines = (text: Locator) => text.evaluate((e) => e.getClientRects().length);
const width = (el: Locator) => el.evaluate((e) => e.getBoundingClientRect().width);
const pageOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

async function failedJob(f: { queue: string; type: string; error: string; worker: string }): Promise<string> {
  const { rows } = await db().query(
    `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, worker_id, started_at, finished_at, error)
     VALUES ($1, $2, 'failed', '{}', 1, 1, 1, $3, now(), now(), $4) RETURNING job_id`,
    [f.queue, f.type, f.worker, f.error],
  );
  return String(rows[0].job_id);
}

/** A failed job whose error is 2,000 characters with no space, beside the short names an operator reads. */
async function longErrorJob() {
  const token = `tok${Date.now()}`;
  const error = `ECONNREFUSED 10.0.0.12:5432 ${token}${'averyveryverylongtokenwithoutanyspaces'.repeat(60)}`;
  const id = await failedJob({ queue: 'billing', type: 'payment.capture', error, worker: 'vm:9307:65041e' });
  return { id, token, error };
}

test("the dead letter at 1280 px: a group's type is not squeezed by its long error", async ({ page }) => {
  const { token } = await longErrorJob();
  await page.setViewportSize(LAPTOP);
  await page.goto('/dead-letter');
  const group = page.getByTestId('dead-letter-groups').locator('tr', { hasText: token });
  await expect(group).toBeVisible();
  const type = group.locator('td').nth(1).locator('bdi');
  await expect(type).toHaveText('payment.capture');
  await expect.poll(() => lines(type), { message: 'the type on one line' }).toBe(1);
  await expect.poll(() => pageOverflow(page)).toBeLessThanOrEqual(0);
});

test('the jobs list at 390 px: the owner reads as one id and the error column is wide enough to read', async ({ page }) => {
  const { id, token } = await longErrorJob();
  await page.setViewportSize(PHONE);
  await page.goto(`/jobs?status=failed&error=${token}`);
  const row = page.getByTestId(`job-row-${id}`);
  await expect(row).toBeVisible();
  const owner = row.locator('td').nth(6).locator('bdi');
  await expect(owner).toHaveText('vm:9307:65041e');
  await expect.poll(() => lines(owner), { message: 'the owner on one line' }).toBe(1);
  await expect.poll(() => width(row.locator('td').nth(8)), { message: 'the last error column' }).toBeGreaterThanOrEqual(180);
  await expect.poll(() => pageOverflow(page)).toBeLessThanOrEqual(0);
});

test('the audit log at 1280 px: who did it reads as a name beside a long reason and filter', async ({ page }) => {
  const { id, token, error } = await longErrorJob();
  const actor = `maria.${token.slice(-5)}`;
  await db().query(
    `INSERT INTO audit_log (actor, actor_kind, action, target, job_ids, changed, skipped, details, state, reason)
     VALUES ($1, 'user', 'bulk.requeue', $2, $3, 1, 0, '{}', 'done', $4)`,
    [actor, JSON.stringify({ filter: { status: 'failed', queue: 'q'.repeat(200) } }), [id], `${'y'.repeat(400)} ${error}`],
  );
  await page.setViewportSize(LAPTOP);
  await page.goto(`/audit?actor=${actor}`);
  const who = page.getByTestId('audit-table').getByRole('button', { name: actor }).locator('bdi');
  await expect(who).toHaveText(actor);
  await expect.poll(() => lines(who), { message: 'the actor on one line' }).toBe(1);
});

/** A job on a 200-character queue, and one on `reminders`: no worker here serves either, so both wait and are listed. */
async function longQueueJob() {
  const queue = `q${Date.now()}${'verylongqueuename'.repeat(12)}`.slice(0, 200);
  const { rows } = await db().query(
    `INSERT INTO jobs (queue, type, payload) VALUES ($1, 'demo.noop', '{}'), ('reminders', 'demo.noop', '{}') RETURNING job_id`,
    [queue],
  );
  return { queue, id: String(rows[0].job_id) };
}

test('a job on a 200-character queue no worker serves: its page does not scroll sideways, at 1280 px or 390 px', async ({ page }) => {
  const { id } = await longQueueJob();
  for (const size of [LAPTOP, PHONE]) {
    await page.setViewportSize(size);
    await page.goto(`/jobs/${id}`);
    await expect(page.getByTestId('waiting-notice')).toContainText('No live worker serves queue');
    await expect.poll(() => pageOverflow(page), { message: `sideways scroll at ${size.width} px` }).toBeLessThanOrEqual(0);
  }
});

test("the overview at 390 px: a 200-character queue name wraps in its cell, and a short one beside it is not cut in two", async ({ page }) => {
  const { queue } = await longQueueJob();
  await page.setViewportSize(PHONE);
  await page.goto('/');
  // The jobs were written to the table, not enqueued through this console: the overview lists
  // them from its next snapshot, up to one refresh interval later (ten times a slow computation).
  // By its whole name: the test before this one made a queue of the same shape a moment earlier.
  await expect(page.getByTestId(`queue-${queue}`)).toBeVisible({ timeout: 45_000 });
  const cell = page.getByTestId('queue-reminders').locator('td').first().locator('bdi');
  await expect(cell).toHaveText('reminders');
  await expect.poll(() => lines(cell), { message: '`reminders` on one line' }).toBe(1);
  await expect.poll(() => pageOverflow(page)).toBeLessThanOrEqual(0);
});

test("a job's 10 KB error: its page shows the start, and the rest on asking", async ({ page }) => {
  const token = `tail${Date.now()}`;
  const error = `upstream answered 502: <html>${'<p>Bad gateway</p>'.repeat(550)}</html> ${token}`;
  const id = await failedJob({ queue: 'billing', type: 'payment.capture', error, worker: 'vm:9307:65041e' });
  await page.setViewportSize(LAPTOP);
  await page.goto(`/jobs/${id}`);
  const last = page.getByTestId('last-error');
  await expect(last).toContainText('upstream answered 502: <html><p>Bad gateway</p>');
  await expect(last).not.toContainText(token);
  // The timeline beside it, and the attempts below, are not pushed a screen away.
  const height = await last.evaluate((e) => e.getBoundingClientRect().height);
  expect(height).toBeLessThan(400);
  await last.getByRole('button', { name: /show all \([\d,]+ more characters\)/ }).click();
  await expect(last).toContainText(token);
  await last.getByRole('button', { name: 'show less' }).click();
  await expect(last).not.toContainText(token);
});

test('a table wider than a phone says so: the edge fades and an arrow shows in it until it is scrolled; at 1280 px, where it fits, nothing shows', async ({ page }) => {
  await page.setViewportSize(PHONE);
  await page.goto('/workers');
  const table = page.getByTestId('worker-table');
  await expect(table.locator('tbody tr').first()).toBeVisible();
  // [data-overflow] appears once the frame has measured its table.
  const frame = page.locator('[data-overflow]', { has: table });
  await expect(frame).toHaveAttribute('data-overflow', 'right');
  const hint = frame.getByTestId('scroll-hint');
  await expect(hint).toBeVisible();
  // Within the faded edge (24 px), where it hides no header label still in view.
  const [frameBox, hintBox] = [await frame.boundingBox(), await hint.boundingBox()];
  expect(hintBox!.x).toBeGreaterThanOrEqual(frameBox!.x + frameBox!.width - 24);
  await expect.poll(() => pageOverflow(page), { message: 'the table scrolls in its frame, not the page' }).toBeLessThanOrEqual(0);
  // Scrolled to its end: nothing more to the right; the tag has done its work.
  await table.evaluate((t) => t.parentElement!.scrollTo({ left: t.parentElement!.scrollWidth }));
  await expect(frame).toHaveAttribute('data-overflow', 'left');
  await expect(hint).toHaveCount(0);
  await page.setViewportSize(LAPTOP);
  await page.goto('/workers');
  await expect(table.locator('tbody tr').first()).toBeVisible();
  // It fits (measured here, not only as the frame says), and the frame says so.
  await expect.poll(() => table.evaluate((t) => t.parentElement!.scrollWidth - t.parentElement!.clientWidth)).toBeLessThanOrEqual(1);
  await expect(frame).toHaveAttribute('data-overflow', 'none');
  await expect(frame.getByTestId('scroll-hint')).toHaveCount(0);
});

test("at 390 px a dead-letter group's actions and a queue's Pause are on screen, not a sideways scroll away", async ({ page }) => {
  const { token } = await longErrorJob();
  await page.setViewportSize(PHONE);
  const onScreen = async (el: Locator) => {
    await expect(el).toBeVisible();
    const box = (await el.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
  };
  await page.goto('/dead-letter');
  const group = page.getByTestId('dead-letter-groups').locator('tr', { hasText: token });
  for (const name of [/^Requeue group/, /^Delete group/]) await onScreen(group.getByRole('button', { name }));
  // Stacked, the group does not scroll; its type, error and queue read in full width.
  await expect(page.locator('[data-overflow]', { has: page.getByTestId('dead-letter-groups') })).toHaveAttribute('data-overflow', 'none');
  await expect(group).toContainText('payment.capture');
  await expect(group).toContainText('billing');

  await page.goto('/');
  const queue = page.getByTestId('queue-billing');
  // The table still scrolls (twelve columns); the button stays at its right edge.
  await expect(page.locator('[data-overflow]', { has: page.getByTestId('queue-table') })).toHaveAttribute('data-overflow', 'right');
  await onScreen(queue.getByRole('button', { name: /^(Pause|Resume) queue billing$/ }));
});
