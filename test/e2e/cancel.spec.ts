import { expect, test } from './test';
import { closeDb, enqueue, waitForStatus } from './helpers';

test.afterAll(closeDb);

test('cancel a running job from its page: the worker stops it at its next heartbeat', async ({ page, request }) => {
  const id = await enqueue(request, { type: 'demo.sleep', payload: { ms: 60_000 } });
  await waitForStatus(id, 'running');
  await page.goto(`/jobs/${id}`);
  await expect(page.getByTestId('lease-panel')).toBeVisible();
  await page.getByRole('button', { name: 'Cancel', exact: true }).click();
  const dialog = page.getByRole('dialog');
  // The preview says what will happen before anything does.
  await expect(dialog.getByTestId('preview-summary')).toContainText('1 will change');
  await expect(dialog.getByTestId(`action-item-${id}`)).toContainText('asked to stop at its next heartbeat');
  await dialog.getByRole('button', { name: 'Cancel 1 job' }).click();
  await expect(dialog.getByTestId('report-summary')).toContainText('1 changed');
  await expect(dialog.getByTestId(`action-item-${id}`)).toContainText('cancel requested');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await waitForStatus(id, 'cancelled', 20_000);
  await expect(page.getByTestId('job-status').first()).toContainText('cancelled');
  await expect(page.getByTestId('attempt-1')).toContainText('cancelled');
});
