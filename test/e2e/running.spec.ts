import { expect, test } from './test';
import { closeDb, db, enqueue, jobRow, screenshot, seconds, waitForStatus } from './helpers';

test.afterAll(closeDb);

test("a running job's lease countdown ticks every second, then the job completes", async ({ page, request }) => {
  test.setTimeout(120_000);
  const id = await enqueue(request, { type: 'demo.sleep', payload: { ms: 25_000 } });
  await waitForStatus(id, 'running');
  const row = await jobRow(id);

  // The job's page. Pause live refresh: no new data arrives, so any change of the
  // countdown is the browser ticking it (lease 10 s, renewed every 1 s by the worker).
  await page.goto(`/jobs/${id}`);
  const panel = page.getByTestId('lease-panel');
  const countdown = panel.getByTestId('lease-countdown');
  await expect(countdown).toHaveText(/^\d+ s$/);
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByTestId('refresh-state')).toHaveText('Refresh paused');
  const first = seconds(await countdown.innerText());
  expect(first).toBeGreaterThan(3);
  await expect.poll(async () => seconds(await countdown.innerText()), { timeout: 10_000 }).toBeLessThanOrEqual(first - 2);
  await expect(panel.getByTestId('owner')).toHaveText(row.worker_id);
  await expect(panel.getByTestId('attempts')).toHaveText('1/3');
  await expect(panel.getByTestId('heartbeat-age')).toContainText('ago');
  // Its lease is live: Recover, which the server would refuse, says so and points to Requeue.
  await expect(page.getByTestId('recover-button')).toBeDisabled();
  await expect(page.getByTestId('recover-button')).toHaveAccessibleDescription(/its lease is live: Recover moves on an expired lease only/);
  await screenshot(page, 'job-running', { fullPage: true });

  // The list of running jobs: owner, countdown, heartbeat age, attempts n/max.
  await page.goto('/jobs?status=running');
  const listRow = page.getByTestId(`job-row-${id}`);
  await expect(listRow.getByTestId('owner')).toHaveText(row.worker_id);
  await expect(listRow.getByTestId('lease-countdown')).toHaveText(/^\d+ s$/);
  await expect(listRow.getByTestId('heartbeat-age')).toBeVisible();
  await expect(listRow.getByTestId('attempts')).toHaveText('1/3');
  await screenshot(page, 'jobs-running');

  // Selected, the row goes on updating in place: the job completes under the operator's
  // selection, and its row says so (greyed: it no longer matches "running"), still selected,
  // instead of a countdown ticking on past the job's end.
  await listRow.getByRole('checkbox').click();
  await expect(page.getByTestId('selection-text')).toHaveText('1 selected');
  await expect(page.getByTestId('refresh-state')).toHaveText(/^Live · every/);
  await expect(listRow).toContainText('no longer matches this view', { timeout: 60_000 });
  await expect(listRow).toContainText('completed');
  await expect(listRow.getByTestId('lease-countdown')).toHaveCount(0);
  await expect(listRow.getByRole('checkbox')).toBeChecked();
  await expect(page.getByTestId('selection-text')).toHaveText('1 selected');

  // The job's page has it to its end.
  await page.goto(`/jobs/${id}`);
  await expect(page.getByTestId('job-status').first()).toContainText('completed', { timeout: 60_000 });
  await expect(page.getByTestId('attempt-1')).toContainText('completed');
  await expect(page.getByTestId('lease-panel')).toHaveCount(0);
});

test("a running job whose worker died says so where its lease counts down, on its page and in the list", async ({ page }) => {
  // A worker process its supervisor saw die (what worker/bin/worker.ts records), holding a job
  // of a queue no e2e worker serves, its lease a minute from its end.
  await db().query(
    `INSERT INTO workers (worker_id, host, pid, queues, concurrency, started_at, heartbeat_at, stopped_at, exit)
     VALUES ('e2e-dead:77:cc', 'e2e-dead', 77, '{e2e-orphan}', 1, now(), now(), now(), 'killed by SIGKILL')`,
  );
  const { rows } = await db().query(
    `INSERT INTO jobs (queue, type, status, attempt_count, worker_id, heartbeat_at, lease_expires_at, started_at)
     VALUES ('e2e-orphan', 'demo.noop', 'running', 1, 'e2e-dead:77:cc', now(), now() + interval '60 s', now()) RETURNING job_id::text AS id`,
  );
  const id = rows[0].id as string;
  await page.goto(`/jobs/${id}`);
  await expect(page).toHaveTitle(`Job #${id} · Leasehold`);
  await expect(page.getByTestId('lease-panel').getByTestId('owner-gone')).toContainText('worker died (killed by SIGKILL) — recovered when the lease ends in');
  await page.goto('/jobs?queue=e2e-orphan');
  await expect(page.getByTestId(`job-row-${id}`).getByTestId('owner-gone')).toBeVisible();
  await db().query(`UPDATE jobs SET status = 'cancelled', lease_expires_at = NULL, finished_at = now() WHERE job_id = $1`, [id]);
});

test('a suspect (two leases lost in a row) says so on its page as in the list, and why it waits', async ({ page }) => {
  // On a queue no worker serves, so nothing claims it while the page is read.
  const { rows } = await db().query(
    `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, lease_lost_streak)
     VALUES ('e2e-suspect-q', 'demo.noop', 'retrying', '{}', 2, 5, 5, 2) RETURNING job_id`,
  );
  const id = String(rows[0].job_id);
  try {
    await page.goto(`/jobs/${id}`);
    await expect(page.getByTestId('job-suspect')).toHaveText('suspect: 2 leases lost in a row');
    await page.goto('/jobs?queue=e2e-suspect-q');
    await expect(page.getByTestId(`job-row-${id}`).getByTestId('suspect')).toHaveText('suspect: 2 leases lost in a row');
  } finally {
    await db().query('DELETE FROM jobs WHERE job_id = $1', [id]);
  }
});
