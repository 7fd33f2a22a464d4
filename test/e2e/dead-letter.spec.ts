import { expect, test } from './test';
import { closeDb, db, enqueue, screenshot, waitForStatus } from './helpers';

test.afterAll(closeDb);

// demo.sleep with failTimes: 1 fails its first attempt; with maxAttempts: 1 that is the
// end of it: the job lands in the dead letter. Requeued, attempt 2 succeeds.
const failing = (n: number) => ({ type: 'demo.sleep', payload: { ms: 20, failTimes: n }, maxAttempts: 1 });

test('a failed job in the dead letter is requeued from the page and completes', async ({ page, request }) => {
  const id = await enqueue(request, failing(1));
  await waitForStatus(id, 'failed');
  await page.goto('/dead-letter');
  const groups = page.getByTestId('dead-letter-groups');
  await expect(groups).toContainText('demo.sleep: failing attempt # of the first # on purpose');
  // Select the job in the list of failed jobs and requeue it with a fresh attempt budget.
  const row = page.getByTestId(`job-row-${id}`);
  await expect(row).toBeVisible();
  await row.getByRole('checkbox').click();
  await expect(page.getByTestId('selection-text')).toHaveText('1 selected');
  await expect(page.getByTestId('refresh-state')).toHaveText(/^Live · every/); // a selection does not stop the rows updating
  // Escape in a field is the field's (it empties the search box): the selection stays. On the page, it clears it.
  const search = page.locator('#job-search');
  await search.fill('4211');
  await search.press('Escape');
  await expect(page.getByTestId('selection-text')).toHaveText('1 selected');
  await search.fill('');
  await row.getByRole('checkbox').focus();
  await page.getByTestId('selection-bar').getByRole('button', { name: 'Requeue' }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('preview-summary')).toContainText('1 will change');
  // The open dialog keeps the keyboard: Tab wraps inside it, and shortcuts wait (g w would
  // leave the page).
  for (let k = 0; k < 12; k++) {
    await page.keyboard.press(k % 4 === 3 ? 'Shift+Tab' : 'Tab');
    expect(await dialog.evaluate((d) => d.contains(document.activeElement)), `focus left the dialog after ${k + 1} presses`).toBe(true);
  }
  await dialog.getByRole('button', { name: 'Dismiss' }).focus();
  await page.keyboard.press('g');
  await page.keyboard.press('w');
  await expect(dialog.getByTestId('preview-summary')).toBeVisible();
  expect(new URL(page.url()).pathname).toBe('/dead-letter');
  // A click beside the dialog keeps it, and what was typed in it.
  await dialog.getByLabel('Reason').fill('replayed after the SMTP fix');
  await page.mouse.click(5, 5);
  await expect(dialog.getByLabel('Reason')).toHaveValue('replayed after the SMTP fix');
  await dialog.getByLabel('Reset attempts (a fresh attempt budget)').check();
  await expect(dialog.getByTestId(`action-item-${id}`)).toContainText('failed → queued with a fresh attempt budget');
  await screenshot(page, 'dead-letter-requeue-preview');
  await dialog.getByRole('button', { name: 'Requeue 1 job' }).click();
  await expect(dialog.getByTestId('report-summary')).toContainText('1 changed, 0 skipped');
  await dialog.getByRole('button', { name: 'Close' }).click();
  // The Requeue button that opened it left with the selection the action cleared: the focus
  // is in the page's content, not back at the top of the document.
  await expect(dialog).toHaveCount(0);
  expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('MAIN');
  await waitForStatus(id, 'completed');
  await page.goto(`/jobs/${id}`);
  await expect(page.getByTestId('job-status').first()).toContainText('completed');
  await expect(page.getByTestId('attempt-1')).toContainText('failed (dead letter)');
  await expect(page.getByTestId('attempt-2')).toContainText('completed');
  // Each attempt links to its own logs: its worker and its time span (LEASEHOLD_LOG_URL, test/e2e/env.ts).
  const { rows: ran } = await db().query(`SELECT attempt, worker_id FROM job_attempts WHERE job_id = $1 ORDER BY attempt`, [id]);
  for (const { attempt, worker_id } of ran) {
    await expect(page.getByTestId(`attempt-${attempt}`).getByTestId('attempt-logs')).toHaveAttribute(
      'href',
      new RegExp(`^http://127\\.0\\.0\\.1:9/logs\\?job=${id}&attempt=${attempt}&worker=${encodeURIComponent(worker_id).replace(/[.]/g, '\\.')}&from=\\d{13}&to=\\d{13}$`),
    );
  }
  expect(ran.length).toBe(2);
});

test('a whole error group is requeued: the preview counts exactly the jobs it will touch', async ({ page, request }) => {
  const ids = [await enqueue(request, failing(1)), await enqueue(request, failing(1)), await enqueue(request, failing(1))];
  for (const id of ids) await waitForStatus(id, 'failed');
  const { rows } = await db().query(
    `SELECT count(*)::int AS n FROM jobs WHERE status = 'failed' AND type = 'demo.sleep' AND error LIKE 'demo.sleep: failing attempt % on purpose'`,
  );
  await page.goto('/dead-letter');
  const group = page.getByTestId('dead-letter-groups').locator('tr', { hasText: 'failing attempt # of the first # on purpose' });
  await expect(group).toContainText(String(rows[0].n));
  await screenshot(page, 'dead-letter', { fullPage: true });
  await group.getByRole('button', { name: /^Requeue group/ }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('preview-summary')).toContainText(`${rows[0].n} will change`);
  await dialog.getByLabel('Reset attempts (a fresh attempt budget)').check();
  await dialog.getByRole('button', { name: `Requeue ${rows[0].n} job${rows[0].n === 1 ? '' : 's'}` }).click();
  await expect(dialog.getByTestId('report-summary')).toContainText(`${rows[0].n} changed, 0 skipped`);
  await dialog.getByRole('button', { name: 'Close' }).click();
  for (const id of ids) await waitForStatus(id, 'completed');
  await expect(page.getByTestId('dead-letter-groups').locator('tr', { hasText: 'failing attempt # of the first # on purpose' })).toHaveCount(0);
});

test('a job enqueued long ago that fails now is announced and heads the dead letter', async ({ page, request }) => {
  // Waiting on a queue no e2e worker serves: the oldest id of this test.
  const old = await enqueue(request, { type: 'demo.noop', queue: 'e2e-dead-late' });
  const newer = await enqueue(request, failing(1));
  await waitForStatus(newer, 'failed');
  // A page of the list is shared by every viewer for a second (the last test's dead letter
  // read it): wait until the shared page holds the failure, so the page opens with it in
  // the list rather than announced as new.
  await expect
    .poll(async () => ((await (await request.get('/api/jobs?status=failed&limit=50')).json()).jobs as { id: string }[]).some((j) => j.id === newer))
    .toBe(true);
  await page.goto('/jobs?status=failed');
  await expect(page.getByTestId(`job-row-${newer}`)).toBeVisible();
  // It fails now (as a last attempt would): an old id, a new failure.
  await db().query(
    `UPDATE jobs SET status = 'failed', finished_at = now(), attempt_count = 1, max_attempts = 1, error = 'failed late (e2e)' WHERE job_id = $1`,
    [old],
  );
  await expect(page.getByTestId('new-rows')).toContainText('1 new job matches this view', { timeout: 30_000 });
  await page.getByTestId('new-rows').getByRole('button', { name: 'Show 1' }).click();
  const rows = page.locator('[data-testid^="job-row-"]');
  await expect(rows.first()).toHaveAttribute('data-testid', `job-row-${old}`);
  await db().query(`DELETE FROM jobs WHERE job_id = ANY($1::bigint[])`, [[old, newer]]);
});

test('an error holding a long unbroken token (a signature, a hex dump) keeps the groups inside the page, their buttons in reach', async ({ page, request }) => {
  const id = await enqueue(request, failing(1));
  const neighbour = await enqueue(request, failing(1)); // a group of its own, whose buttons must stay in reach too
  await waitForStatus(id, 'failed');
  await waitForStatus(neighbour, 'failed');
  const token = Buffer.from(Array.from({ length: 2_400 }, (_, k) => (k * 37) % 256)).toString('base64'); // 3,200 characters, no space
  await db().query(`UPDATE jobs SET error = $2 WHERE job_id = $1`, [id, `invalid signature for token ${token}`]);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto('/dead-letter');
  const groups = page.getByTestId('dead-letter-groups');
  await expect(groups).toContainText('invalid signature for token #');
  const width = page.viewportSize()!.width;
  const buttons = groups.getByRole('button', { name: /^Requeue group/ });
  expect(await buttons.count()).toBeGreaterThan(1);
  for (const b of await buttons.all()) {
    const box = (await b.boundingBox())!;
    expect(box.x + box.width, 'a Requeue group button past the right edge').toBeLessThanOrEqual(width);
  }
  expect(await page.evaluate(() => document.documentElement.scrollWidth), 'the page scrolls sideways').toBeLessThanOrEqual(width);
});
