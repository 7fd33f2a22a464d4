import { expect, test } from './test';
import { insertJob } from '../factories';
import { cancelQuietly, closeDb, db, enqueue, screenshot, statusCount, waitForStatus } from './helpers';

test.afterAll(closeDb);


test('the overview shows live counts: an enqueued job runs and completes', async ({ page, request }) => {
  test.setTimeout(90_000);
  await page.goto('/');
  await expect(page.getByTestId('count-completed')).toBeVisible();
  await expect(page.getByTestId('workers-alive')).not.toHaveText('0');
  const completedBefore = await statusCount(page, 'completed');
  await page.getByRole('button', { name: 'Enqueue demo job' }).click();
  await expect(page.getByRole('status')).toContainText(/Enqueued job #\d+/);
  const demo = (await page.getByRole('status').innerText()).match(/#(\d+)/)![1]!;
  // The counts are a snapshot shared by every viewer, refreshed every 2 s or more (ten times
  // its own cost on a busy machine) and shown within a refresh interval: a job must run
  // longer than that to be seen running for sure — the demo job's 3 s may fall between
  // two snapshots. This one runs for 12 s.
  const long = await enqueue(request, { type: 'demo.sleep', payload: { ms: 12_000 } });
  await waitForStatus(long, 'running');
  await expect.poll(() => statusCount(page, 'running'), { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
  await waitForStatus(demo, 'completed');
  await waitForStatus(long, 'completed', 30_000);
  await expect.poll(() => statusCount(page, 'completed'), { timeout: 30_000 }).toBe(completedBefore + 2);
  await expect(page.getByTestId('count-kind-completed')).toContainText('exact');
});

test('enqueued jobs move the counts, the queue table and the throughput chart', async ({ page, request }) => {
  await page.goto('/');
  const queuedBefore = await statusCount(page, 'queued');
  const completedBefore = await statusCount(page, 'completed');
  // Ten jobs that wait a minute before they are due: the queued count rises by exactly ten.
  const later = new Date(Date.now() + 60_000).toISOString();
  const waiting = await request.post('/api/jobs', { data: Array.from({ length: 10 }, () => ({ type: 'demo.noop', queue: 'e2e-later', runAt: later })) });
  expect(waiting.status()).toBe(202);
  await expect.poll(() => statusCount(page, 'queued')).toBe(queuedBefore + 10);
  await expect(page.getByTestId('queue-e2e-later')).toBeVisible();
  // And a burst that runs now: completed rises by twenty.
  const ids = (await (await request.post('/api/jobs', { data: Array.from({ length: 20 }, (_, i) => ({ type: 'demo.sleep', payload: { ms: 50 + i } })) })).json()).jobs.map(
    (j: { id: string }) => j.id,
  );
  await expect.poll(() => statusCount(page, 'completed'), { timeout: 30_000 }).toBeGreaterThanOrEqual(completedBefore + 20);
  for (const id of ids) await waitForStatus(id, 'completed');
  // The charts plot the workers' counters once two samples exist.
  await expect(page.getByRole('img', { name: 'throughput chart' })).toBeVisible({ timeout: 30_000 });
  await screenshot(page, 'overview', { fullPage: true });
  // Which queues live workers consume: a due job on a queue nobody consumes says so.
  await expect(page.getByTestId('queue-default').getByTestId('queue-workers')).toHaveText(/^[1-9]\d*$/);
  await expect(page.getByTestId('queue-e2e-later').getByTestId('queue-workers')).toHaveText('0');
  const orphan = await enqueue(request, { type: 'demo.noop', queue: 'e2e-nobody' });
  await expect(page.getByTestId('queue-e2e-nobody').getByTestId('queue-workers')).toHaveText('none — jobs wait', { timeout: 20_000 });
  expect((await request.post(`/api/jobs/${orphan}/cancel`)).status()).toBe(200);
  // Tidy: the waiting jobs are cancelled so later tests see a quiet queue.
  const { rows } = await db().query(`SELECT job_id::text AS id FROM jobs WHERE queue = 'e2e-later' AND status = 'queued'`);
  for (const r of rows) await request.post(`/api/jobs/${r.id}/cancel`);
});

test('job types: per queue and type, what the attempts did and how long they ran, linked to their jobs', async ({ page, request }) => {
  test.setTimeout(90_000);
  await page.goto('/');
  // Ten jobs that fail their first attempt and complete on the second: twenty runs, the
  // fewest a p95 is shown from.
  const res = await request.post('/api/jobs', { data: Array.from({ length: 10 }, () => ({ type: 'demo.sleep', payload: { ms: 30, failTimes: 1 }, maxAttempts: 2 })) });
  expect(res.status()).toBe(202);
  for (const { id } of (await res.json()).jobs as { id: string }[]) await waitForStatus(id, 'completed', 30_000);
  const row = page.locator('[data-testid="type-row"][data-queue="default"][data-type="demo.sleep"]');
  // The table compares two samples of the workers' counters (every 5 s, a heartbeat behind).
  await expect.poll(async () => Number(((await row.getByTestId('type-retried').textContent({ timeout: 1_000 }).catch(() => '')) ?? '').replace(/,/g, '')), { timeout: 45_000 }).toBeGreaterThanOrEqual(10);
  await expect(row.getByTestId('type-failure-rate')).toHaveText(/^\d+(\.\d)? %$/);
  await expect(row.getByTestId('type-run-time')).toHaveText(/^[\d.]+ (ms|s) \/ [\d.]+ (ms|s)$/);
  await page.getByTestId('type-table').scrollIntoViewIfNeeded();
  await screenshot(page, 'job-types');
  // The last 24 hours come from the record the recover sweep keeps (a sample a minute).
  await page.getByTestId('activity-range').selectOption('24h');
  await expect(page.getByText('Throughput (jobs/s, per 5 min)')).toBeVisible();
  await expect(page.getByText('Job types: the last 24 hours')).toBeVisible();
  const { rows } = await db().query(`SELECT count(*)::int AS n FROM stats_samples`);
  expect(rows[0].n).toBeGreaterThanOrEqual(1);
  await page.getByTestId('activity-range').selectOption('live');
  await row.getByRole('link', { name: 'demo.sleep' }).click();
  await expect(page).toHaveURL(/\/jobs\?queue=default&type=demo\.sleep$/);
});

// A session that holds the recover sweep's lock without sweeping (here the test's own; in
// life, one stuck behind a row lock, or a frozen process): the workers' sweeps find the lock
// taken and return, and nothing moves expired leases on. The overview says so, and stops
// saying it once the lock is let go and a sweep runs.
test('a recover sweep that has stopped while workers are alive is called out, until it runs again', async ({ page, request }) => {
  // The overview's snapshot is shared and refreshed at ten times its own cost: on a busy
  // machine, tens of seconds.
  test.setTimeout(240_000);
  const holder = await db().connect();
  let stuck = '';
  try {
    // Taken as a worker's sweep takes it; a sweep in progress finishes first.
    await expect.poll(async () => (await holder.query(`SELECT pg_try_advisory_lock(hashtext('leasehold.recover')) AS mine`)).rows[0].mine, { timeout: 30_000 }).toBe(true);
    // As if it had been held for ten minutes (the bound is a minute at the least).
    await db().query(`UPDATE recover_sweep SET swept_at = now() - interval '10 minutes'`);
    await page.goto('/');
    await expect(page.getByTestId('sweep-stopped')).toContainText(/The recover sweep last ran 1\d min( \d+ s)? ago, although \d+ worker process/, { timeout: 90_000 });
    // A lease that ran out meanwhile (on a queue no worker takes from, so no claim takes it
    // over): its page and its row in the list say nothing moves it on, not "will be recovered".
    stuck = await insertJob(db(), { queue: 'e2e-unswept', status: 'running', workerId: 'e2e-dead-worker', leaseInMs: -5_000 });
    await page.goto(`/jobs/${stuck}`);
    await expect(page.getByTestId('lease-expired')).toHaveText(/^expired — no recover sweep for 1\d min/);
    await expect(page.getByTestId('expired-notice')).toContainText(/The recover sweep has not run for 1\d min( \d+ s)? although workers are alive/);
    await page.goto('/jobs?queue=e2e-unswept');
    await expect(page.getByTestId('lease-expired')).toHaveText(/^expired — no recover sweep for 1\d min/, { timeout: 60_000 });
  } finally {
    await holder.query(`SELECT pg_advisory_unlock(hashtext('leasehold.recover'))`).catch(() => {});
    holder.release(true); // discarded, not pooled: it cannot go on holding the lock
  }
  await expect(page.getByTestId('sweep-stopped')).toHaveCount(0, { timeout: 90_000 });
  // The sweep runs again and moves the expired lease on.
  await waitForStatus(stuck, 'retrying', 60_000);
  await cancelQuietly(request, stuck);
});

test('dark theme, the environment badge and keyboard shortcuts', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('count-queued')).toBeVisible();
  await expect(page.getByTestId('env-badge')).toHaveText('e2e');
  await page.keyboard.press('t');
  await expect(page.locator('html')).toHaveClass(/dark/);
  await page.keyboard.press('?');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await screenshot(page, 'overview-dark', { fullPage: true });
  await page.keyboard.press('g');
  await page.keyboard.press('j');
  await expect(page).toHaveURL(/\/jobs$/);
  await page.keyboard.press('/');
  await expect(page.locator('#job-search')).toBeFocused();
  await page.keyboard.press('Escape');
  await page.locator('body').click();
  await page.keyboard.press('t');
  await expect(page.locator('html')).not.toHaveClass(/dark/);
  await page.keyboard.press('g');
  await page.keyboard.press('a');
  await expect(page).toHaveURL(/\/audit$/);
});

test('pausing a queue asks once more, with a reason for the audit log; resuming is one click', async ({ page, request }) => {
  await enqueue(request, { type: 'demo.noop', queue: 'e2e-pausable', runAt: new Date(Date.now() + 3_600_000).toISOString() });
  await page.goto('/');
  const row = page.getByTestId('queue-e2e-pausable');
  await expect(row).toBeVisible();
  const pauseButton = row.getByRole('button', { name: 'Pause queue e2e-pausable' });
  const dialog = page.getByRole('dialog', { name: 'Pause queue' });
  await pauseButton.click();
  // It says what a pause does, to this queue, before it is done.
  await expect(dialog.getByTestId('pause-what')).toContainText('No worker on any host claims a job from e2e-pausable until it is resumed');
  await expect(dialog.getByTestId('pause-what')).toContainText('None of its jobs is running; none is due now, and those that come due wait.');
  await expect(dialog.getByLabel('Reason')).toBeFocused();
  await dialog.getByRole('button', { name: 'Back' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(pauseButton).toBeFocused();
  // Escape keeps it running too, as it closes every dialog, and the focus is back on Pause….
  await pauseButton.click();
  await dialog.getByLabel('Reason').press('Escape');
  await expect(dialog).toHaveCount(0);
  await expect(pauseButton).toBeFocused();
  const paused = async () => (await db().query(`SELECT paused_at IS NOT NULL AS p FROM queues WHERE name = 'e2e-pausable'`)).rows[0]?.p ?? false;
  expect(await paused(), 'nothing paused before the confirmation').toBe(false);
  await pauseButton.click();
  await dialog.getByLabel('Reason').fill('upstream mail provider down');
  await dialog.getByRole('button', { name: 'Pause queue' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(row.getByTestId('controls')).toContainText('paused');
  expect(await paused()).toBe(true);
  const { rows } = await db().query(`SELECT reason FROM audit_log WHERE action = 'queue.pause' AND target->>'queue' = 'e2e-pausable'`);
  expect(rows.map((r) => r.reason)).toEqual(['upstream mail provider down']);
  await row.getByRole('button', { name: 'Resume queue e2e-pausable' }).focus();
  await page.keyboard.press('Enter');
  await expect.poll(paused).toBe(false);
  // The focus stays on the row's button (busy while the request ran, never disabled: a
  // focused button that is disabled drops the focus to the top of the page).
  await expect(row.getByRole('button', { name: 'Pause queue e2e-pausable' })).toBeFocused();
});
