import { expect, test } from '@playwright/test';
import { closeDb, enqueue, jobRow, screenshot, seconds, waitForStatus } from './helpers';

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
  await screenshot(page, 'job-running', { fullPage: true });

  // The list of running jobs: owner, countdown, heartbeat age, attempts n/max.
  await page.goto('/jobs?status=running');
  const listRow = page.getByTestId(`job-row-${id}`);
  await expect(listRow.getByTestId('owner')).toHaveText(row.worker_id);
  await expect(listRow.getByTestId('lease-countdown')).toHaveText(/^\d+ s$/);
  await expect(listRow.getByTestId('heartbeat-age')).toBeVisible();
  await expect(listRow.getByTestId('attempts')).toHaveText('1/3');
  await screenshot(page, 'jobs-running');

  // Live again: the job's page follows it to its end.
  await page.goto(`/jobs/${id}`);
  await expect(page.getByTestId('job-status').first()).toContainText('completed', { timeout: 60_000 });
  await expect(page.getByTestId('attempt-1')).toContainText('completed');
  await expect(page.getByTestId('lease-panel')).toHaveCount(0);
});
