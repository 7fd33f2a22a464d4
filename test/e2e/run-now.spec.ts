import { expect, test } from './test';
import { closeDb, enqueue, waitForStatus } from './helpers';

test.afterAll(closeDb);

test('a job scheduled for later is run now from its page', async ({ page, request }) => {
  const id = await enqueue(request, { type: 'demo.sleep', payload: { ms: 50 }, runAt: new Date(Date.now() + 3_600_000).toISOString() });
  await page.goto(`/jobs/${id}`);
  await expect(page.getByTestId('job-status').first()).toContainText('queued');
  await expect(page.getByTestId('requeue-button')).toHaveText('Run now');
  // It says when it will run, not that it waits for a worker.
  await expect(page.getByTestId('no-attempts')).toContainText(/scheduled for .*\(in 5\d min/);
  // The jobs list's scheduled view has it; the due-now view does not.
  await page.goto('/jobs?due=later');
  await expect(page.getByTestId(`job-row-${id}`)).toBeVisible();
  await page.getByLabel('Due').selectOption('now');
  await expect(page).toHaveURL(/due=now/);
  await expect(page.getByTestId(`job-row-${id}`)).toHaveCount(0);
  await page.goto(`/jobs/${id}`);
  await page.getByTestId('requeue-button').click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId(`action-item-${id}`)).toContainText('→ due now');
  await dialog.getByRole('button', { name: 'Requeue 1 job' }).click();
  await expect(dialog.getByTestId('report-summary')).toContainText('1 changed');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await waitForStatus(id, 'completed', 30_000);
  await expect(page.getByTestId('job-status').first()).toContainText('completed');
});

test('a job in a paused queue says its queue is paused, and runs once it is resumed', async ({ page, request }) => {
  const pause = async (paused: boolean) => expect((await request.post('/api/queues/default', { data: { paused } })).status()).toBe(200);
  await pause(true);
  try {
    const id = await enqueue(request, { type: 'demo.noop' });
    await page.goto(`/jobs/${id}`);
    await expect(page.getByTestId('paused-notice')).toContainText('Queue default is paused');
    await expect(page.getByTestId('no-attempts')).toHaveText('Not claimed yet: its queue is paused.');
    // What its state forbids is disabled, and says why.
    const del = page.getByRole('button', { name: 'Delete' });
    await expect(del).toBeDisabled();
    await expect(del.locator('..')).toHaveAttribute('title', /only a finished job .* can be deleted/);
    await expect(page.getByTestId('requeue-button-wrap')).toHaveAttribute('title', 'already queued and due: it waits for a worker');
    await pause(false);
    await waitForStatus(id, 'completed', 30_000);
    await expect(page.getByTestId('paused-notice')).toHaveCount(0);
  } finally {
    await pause(false);
  }
});
