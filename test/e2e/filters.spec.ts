import fs from 'node:fs';
import { type Page } from '@playwright/test';
import { expect, test } from './test';
import { cancelQuietly, closeDb, db, enqueue, screenshot, waitForStatus } from './helpers';

test.afterAll(closeDb);

/** Cancel from the selection bar: the preview counts n jobs that will change, and all n do. */
async function cancelSelection(page: Page, n: number) {
  const jobs = `${n} job${n === 1 ? '' : 's'}`;
  await page.getByTestId('selection-bar').getByRole('button', { name: 'Cancel', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('preview-summary')).toContainText(`${jobs}: ${n} will change`);
  await dialog.getByRole('button', { name: `Cancel ${jobs}` }).click();
  await expect(dialog.getByTestId('report-summary')).toContainText(`${n} changed, 0 skipped`);
}

test('filters live in the URL and survive a reload', async ({ page, request }) => {
  const done = await enqueue(request, { type: 'demo.noop', queue: 'default', payload: { account: 4242, region: 'eu' } });
  await waitForStatus(done, 'completed');
  await page.goto('/jobs');
  await page.getByLabel('Status').selectOption('completed');
  await expect(page).toHaveURL(/status=completed/);
  await page.getByLabel('Queue').fill('default');
  await page.getByLabel('Type').fill('demo.noop');
  await page.getByLabel('Payload').fill('account=4242');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL(/\/jobs\?status=completed&queue=default&type=demo\.noop&payload=account%3D4242$/);
  await expect(page.getByTestId(`job-row-${done}`)).toBeVisible();

  await page.reload();
  await expect(page.getByLabel('Status')).toHaveValue('completed');
  await expect(page.getByLabel('Queue')).toHaveValue('default');
  await expect(page.getByLabel('Type')).toHaveValue('demo.noop');
  await expect(page.getByLabel('Payload')).toHaveValue('account=4242');
  await expect(page.getByTestId(`job-row-${done}`)).toBeVisible();
  const statuses = await page.getByTestId('job-table').getByTestId('job-status').allInnerTexts();
  expect(statuses.length).toBeGreaterThan(0);
  for (const s of statuses) expect(s).toContain('completed');
  await screenshot(page, 'jobs-filtered');
  // Each applied filter is a step in the browser's history: Back undoes the last one.
  await page.goBack();
  await expect(page).toHaveURL(/\/jobs\?status=completed$/);
  await expect(page.getByLabel('Queue')).toHaveValue('');
  await expect(page.getByLabel('Status')).toHaveValue('completed');
});

// Which jobs needed more than one try (a flaky dependency, a handler that times out): a
// job that failed once and then completed, beside one that completed at once.
test('the Attempts filter lists the jobs claimed at least n times, and keeps it in the URL', async ({ page, request }) => {
  const once = await enqueue(request, { type: 'demo.sleep', queue: 'default', payload: { ms: 1 } });
  const twice = await enqueue(request, { type: 'demo.sleep', queue: 'default', payload: { ms: 1, failTimes: 1 } });
  await waitForStatus(once, 'completed');
  await waitForStatus(twice, 'completed', 60_000);
  await page.goto('/jobs?status=completed&type=demo.sleep');
  await expect(page.getByTestId(`job-row-${once}`)).toBeVisible();
  await page.getByLabel('Attempts').selectOption('2');
  await expect(page).toHaveURL(/\/jobs\?status=completed&type=demo\.sleep&minAttempts=2$/);
  await expect(page.getByTestId(`job-row-${twice}`)).toBeVisible();
  await expect(page.getByTestId(`job-row-${once}`)).toHaveCount(0);
  await page.reload();
  await expect(page.getByLabel('Attempts')).toHaveValue('2');
  await expect(page.getByTestId(`job-row-${twice}`)).toContainText('2/');
});

test('the Time filter keeps a moving window in the URL; a moment from a link reads as one', async ({ page, request }) => {
  const done = await enqueue(request, { type: 'demo.noop', queue: 'default', payload: { e2e: 'time-filter' } });
  await waitForStatus(done, 'completed');
  await page.goto('/jobs?queue=default&payload=e2e%3Dtime-filter');
  await page.getByLabel('Time').selectOption({ label: 'finished in the last hour' });
  await expect(page).toHaveURL(/\/jobs\?queue=default&payload=e2e%3Dtime-filter&finishedSince=1h$/);
  await expect(page.getByTestId(`job-row-${done}`)).toBeVisible();
  await page.getByLabel('Time').selectOption({ label: 'enqueued in the last 15 minutes' });
  await expect(page).toHaveURL(/\/jobs\?queue=default&payload=e2e%3Dtime-filter&createdSince=15m$/);
  await expect(page.getByTestId(`job-row-${done}`)).toBeVisible();
  // A moment in the future: nothing was enqueued since, and the select says which moment.
  await page.goto('/jobs?queue=default&payload=e2e%3Dtime-filter&createdSince=2999-01-01T00:00:00Z');
  await expect(page.getByLabel('Time').locator('option:checked')).toHaveText('enqueued since 2999-01-01 00:00 UTC');
  await expect(page.getByTestId(`job-row-${done}`)).toHaveCount(0);
  await page.getByLabel('Time').selectOption('');
  await expect(page).toHaveURL(/\/jobs\?queue=default&payload=e2e%3Dtime-filter$/);
  await expect(page.getByTestId(`job-row-${done}`)).toBeVisible();
});

test('Export downloads the jobs the applied filters match, as CSV', async ({ page, request }) => {
  const done = await enqueue(request, { type: 'demo.noop', queue: 'default', payload: { e2e: 'export' } });
  await waitForStatus(done, 'completed');
  await page.goto('/jobs?queue=default&payload=e2e%3Dexport');
  const csv = page.getByTestId('export-links').getByRole('link', { name: 'CSV' });
  await expect(csv).toHaveAttribute('href', '/api/jobs/export?queue=default&payload=e2e%3Dexport&format=csv');
  const [download] = await Promise.all([page.waitForEvent('download'), csv.click()]);
  expect(download.suggestedFilename()).toMatch(/^jobs-all-\d{8}T\d{6}Z\.csv$/);
  const text = await fs.promises.readFile((await download.path())!, 'utf8');
  const lines = text.trim().split('\r\n');
  expect(lines[0]).toBe('id,status,queue,type,attempt_count,max_attempts,worker_id,created_at,run_at,started_at,finished_at,error,payload,priority');
  expect(lines.filter((l) => l.startsWith(`${done},completed,default,demo.noop,`))).toHaveLength(1);
});

test('new jobs are announced in a banner instead of being pushed in under the cursor', async ({ page, request }) => {
  const first = await enqueue(request, { type: 'demo.noop', queue: 'e2e-banner' });
  await page.goto('/jobs?queue=e2e-banner');
  await expect(page.getByTestId(`job-row-${first}`)).toBeVisible();
  const second = await enqueue(request, { type: 'demo.noop', queue: 'e2e-banner' });
  await expect(page.getByTestId('new-rows')).toContainText('1 new job matches this view');
  await expect(page.getByTestId(`job-row-${second}`)).toHaveCount(0);
  // A selection does not outlive the list it was made on: showing the new rows starts over.
  await page.getByTestId(`job-row-${first}`).getByRole('checkbox').click();
  await expect(page.getByTestId('selection-text')).toHaveText('1 selected');
  await page.getByTestId('new-rows').getByRole('button', { name: 'Show 1' }).click();
  await expect(page.getByTestId(`job-row-${second}`)).toBeVisible();
  await expect(page.getByTestId('new-rows')).toHaveCount(0);
  await expect(page.getByTestId('selection-text')).toContainText('Select jobs to act on them');
  // Nor does the row last clicked: a shift-click now selects its one row, not a range from a
  // row chosen on the old list.
  await page.getByTestId(`job-row-${second}`).getByRole('checkbox').click({ modifiers: ['Shift'] });
  await expect(page.getByTestId('selection-text')).toHaveText('1 selected');
  await page.getByTestId(`job-row-${second}`).getByRole('checkbox').click();
  await expect(page.getByTestId('selection-text')).toContainText('Select jobs to act on them');
  // Cancel the waiting jobs (no worker serves e2e-banner) from the list: select all matching.
  await page.getByTestId(`job-row-${first}`).getByRole('checkbox').click();
  await expect(page.getByTestId('selection-text')).toHaveText('1 selected');
  await page.getByRole('button', { name: 'Select every job matching this filter' }).click();
  await expect(page.getByTestId('selection-text')).toContainText('Every job matching queue=e2e-banner');
  await cancelSelection(page, 2);
  await waitForStatus(first, 'cancelled');
  await waitForStatus(second, 'cancelled');
});

test('the running list shows a job that starts after it was read, whatever its id: an empty list re-reads, a full one announces it', async ({ page, request }) => {
  // Two waiting jobs on a queue no e2e worker serves: each "starts" as a claim would start it.
  const older = await enqueue(request, { type: 'demo.noop', queue: 'e2e-running-list' });
  const newer = await enqueue(request, { type: 'demo.noop', queue: 'e2e-running-list' });
  const start = (id: string) =>
    db().query(
      `UPDATE jobs SET status = 'running', worker_id = 'e2e-host:1:fake', attempt_count = 1, started_at = now(), heartbeat_at = now(), lease_expires_at = now() + interval '10 min' WHERE job_id = $1`,
      [id],
    );
  try {
    await page.goto('/jobs?status=running&queue=e2e-running-list');
    await expect(page.getByText('No job matches these filters')).toBeVisible();
    await start(newer);
    await expect(page.getByTestId(`job-row-${newer}`)).toBeVisible();
    // The older id starts now: below the newest id shown, but new to the list.
    await start(older);
    await expect(page.getByTestId('new-rows')).toContainText('1 new job matches this view');
    await page.getByTestId('new-rows').getByRole('button', { name: 'Show 1' }).click();
    await expect(page.getByTestId(`job-row-${older}`)).toBeVisible();
  } finally {
    await db().query('DELETE FROM jobs WHERE job_id = ANY($1::bigint[])', [[older, newer]]);
  }
});

test('a filter typed but not applied is said, and "every job matching" waits until it is applied', async ({ page, request }) => {
  // Waiting jobs in two queues no e2e worker serves.
  const keep = await enqueue(request, { type: 'demo.noop', queue: 'e2e-draft-keep' });
  const mine = await enqueue(request, { type: 'demo.noop', queue: 'e2e-draft' });
  await page.goto('/jobs?status=queued');
  await expect(page.getByTestId(`job-row-${mine}`)).toBeVisible();
  await page.getByLabel('Queue').fill('e2e-draft');
  await expect(page.getByTestId('filters-pending')).toContainText('Not applied yet');
  await page.getByTestId(`job-row-${mine}`).getByRole('checkbox').click();
  await expect(page.getByRole('button', { name: 'Select every job matching this filter' })).toBeDisabled();
  await page.getByLabel('Queue').press('Enter');
  await expect(page).toHaveURL(/\/jobs\?status=queued&queue=e2e-draft$/);
  await expect(page.getByTestId('filters-pending')).toHaveCount(0);
  // The filter applied clears the selection made under the old one (an effect after the new
  // list renders): a click before that would unselect the row, then the clear empty it.
  await expect(page.getByTestId('selection-text')).toContainText('Select jobs to act on them');
  await page.getByTestId(`job-row-${mine}`).getByRole('checkbox').click();
  await expect(page.getByTestId('selection-text')).toHaveText('1 selected');
  await page.getByRole('button', { name: 'Select every job matching this filter' }).click();
  await expect(page.getByTestId('selection-text')).toContainText('Every job matching status=queued, queue=e2e-draft');
  // Typing again after choosing "every job matching": its actions wait too.
  await page.getByLabel('Type').fill('demo.sleep');
  await expect(page.getByTestId('selection-bar').getByRole('button', { name: 'Cancel', exact: true })).toBeDisabled();
  await page.getByLabel('Type').fill('');
  await expect(page.getByTestId('selection-bar').getByRole('button', { name: 'Cancel', exact: true })).toBeEnabled();
  await cancelSelection(page, 1);
  await waitForStatus(mine, 'cancelled');
  await waitForStatus(keep, 'queued');
  // Clear filters clears what was typed, even where no filter was applied (the address stays).
  await page.goto('/dead-letter');
  const queueBox = page.getByLabel('Queue', { exact: true }); // not "Requeue group …"
  await queueBox.fill('e2e-draft');
  await expect(page.getByTestId('filters-pending')).toBeVisible();
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await expect(page.getByTestId('filters-pending')).toHaveCount(0);
  await expect(queueBox).toHaveValue('');
});

test('a filter typed before the page came alive is kept: said as not applied, and Apply uses it', async ({ page, request }) => {
  const mine = await enqueue(request, { type: 'demo.noop', queue: 'e2e-early' });
  // Hold the page's scripts back until the box is typed in: what a slow load and a quick
  // operator do (the CI run that typed into a server-rendered box before hydration). Scripts
  // only: a stylesheet held back would hold the parser, and the boxes, back too.
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  await page.route('**/_next/static/chunks/*.js', async (route) => {
    await released;
    await route.continue();
  });
  await page.goto('/jobs?status=queued', { waitUntil: 'commit' });
  const queueBox = page.getByLabel('Queue');
  await queueBox.fill('e2e-early');
  await page.getByLabel('Search (job id or error text; a number in quotes is error text)').fill(`#${mine}`);
  release();
  await expect(page.getByTestId('filters-pending')).toContainText('Not applied yet');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL(new RegExp(`/jobs\\?status=queued&queue=e2e-early&id=${mine}$`));
  await expect(page.getByTestId(`job-row-${mine}`)).toBeVisible();
  await expect(page.getByTestId('filters-pending')).toHaveCount(0);
});

test("the API's q is the list's search; a parameter the list does not know is named as ignored", async ({ page, request }) => {
  const id = await enqueue(request, { type: 'demo.noop', queue: 'e2e-q' });
  await page.goto(`/jobs?q=${id}`);
  await expect(page).toHaveTitle('Jobs · Leasehold'); // tabs of the console tell themselves apart
  await expect(page.getByLabel(/^Search/)).toHaveValue(id);
  await expect(page.getByTestId(`job-row-${id}`)).toBeVisible();
  await expect(page.getByTestId('ignored-filters')).toHaveCount(0);
  await page.goto('/jobs?queue=e2e-q&search=timeout');
  await expect(page.getByTestId('ignored-filters')).toContainText('Ignored search=timeout (not a filter of this list)');
});

test('an action on every job matching a filter says how many left the filter between its preview and its run', async ({ page, request }) => {
  const queue = 'e2e-bulk-gone';
  // Over 200: the action travels as the filter, resolved again when it runs (not as ids).
  const res = await request.post('/api/jobs', { data: Array.from({ length: 205 }, () => ({ type: 'demo.noop', queue })) });
  expect(res.status()).toBe(202);
  const ids: string[] = (await res.json()).jobs.map((j: { id: string }) => j.id);
  await page.goto(`/jobs?queue=${queue}&status=queued`);
  await page.getByTestId(`job-row-${ids[204]}`).getByRole('checkbox').click();
  await page.getByRole('button', { name: 'Select every job matching this filter' }).click();
  await page.getByTestId('selection-bar').getByRole('button', { name: 'Cancel', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('preview-summary')).toContainText('205 jobs: 205 will change');
  // Three leave the filter (cancelled by someone else) before the confirm.
  for (const id of ids.slice(0, 3)) expect((await request.post(`/api/jobs/${id}/cancel`)).status()).toBe(200);
  await dialog.getByRole('button', { name: 'Cancel 205 jobs' }).click();
  await expect(dialog.getByTestId('report-summary')).toContainText('202 changed, 0 skipped');
  await expect(dialog.getByTestId('no-longer-matching')).toHaveText(
    '3 of the 205 jobs in the preview no longer matched the filter when it ran (changed meanwhile): left alone.',
  );
});

test("a row's checkbox shows its new state as soon as the click is handled, not at the page's next tick", async ({ page, request }) => {
  const id = await enqueue(request, { type: 'demo.noop', queue: 'e2e-tick-at-once' });
  await page.goto('/jobs?queue=e2e-tick-at-once');
  const box = page.getByTestId(`job-row-${id}`).getByRole('checkbox');
  await expect(box).not.toBeChecked();
  // What the box says just after the click's dispatch ends (a task queued during it), before
  // any later render could put it right: a click's default cancelled put it back unticked.
  await box.evaluate((el) => {
    document.addEventListener('click', () => setTimeout(() => el.setAttribute('data-after-click', String((el as HTMLInputElement).checked)), 0), { capture: true, once: true });
  });
  await box.click();
  await expect(box).toHaveAttribute('data-after-click', 'true');
  await box.evaluate((el) => {
    document.addEventListener('click', () => setTimeout(() => el.setAttribute('data-after-click', String((el as HTMLInputElement).checked)), 0), { capture: true, once: true });
  });
  await box.click();
  await expect(box).toHaveAttribute('data-after-click', 'false');
  await cancelQuietly(request, id);
});

test("a row's checkbox is the same element across the page's ticks: a click is never lost to a re-render, nor its focus", async ({ page, request }) => {
  const id = await enqueue(request, { type: 'demo.noop', queue: 'e2e-ticks' });
  await page.goto('/jobs?queue=e2e-ticks');
  const box = page.getByTestId(`job-row-${id}`).getByRole('checkbox');
  await box.focus();
  // Across two of the page's one-second ticks (each re-renders the rows' countdowns).
  const kept = await box.evaluate(async (el) => {
    const t0 = Date.now();
    await new Promise<void>((resolve) => {
      const t = setInterval(() => Date.now() - t0 > 2_200 && (clearInterval(t), resolve()), 100);
    });
    return { connected: el.isConnected, focused: document.activeElement === el };
  });
  expect(kept).toEqual({ connected: true, focused: true });
  await cancelQuietly(request, id);
});

test('on a phone the search and status come first, the other filters behind "More filters", which counts those applied', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/jobs?queue=e2e-phone&type=demo.noop');
  await expect(page.locator('#job-search')).toBeVisible();
  await expect(page.getByLabel('Status')).toBeVisible();
  await expect(page.getByLabel('Queue', { exact: true })).toBeHidden();
  const more = page.getByTestId('more-filters');
  await expect(more).toHaveText('More filters (2 applied)');
  await more.click();
  await expect(page.getByLabel('Queue', { exact: true })).toHaveValue('e2e-phone');
  await expect(more).toHaveText('Fewer filters');
  // From md up, every filter shows and the toggle does not.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.reload();
  await expect(page.getByLabel('Queue', { exact: true })).toBeVisible();
  await expect(more).toBeHidden();
});
