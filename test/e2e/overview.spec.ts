import { expect, test } from '@playwright/test';

const count = async (page: import('@playwright/test').Page, status: string) =>
  Number((await page.getByTestId(`count-${status}`).locator('dd').innerText()).replace(/,/g, ''));

test('the overview shows live counts: an enqueued job runs and completes', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('count-completed')).toBeVisible();
  await expect(page.getByTestId('workers-alive')).not.toHaveText('0');
  const completedBefore = await count(page, 'completed');
  await page.getByRole('button', { name: 'Enqueue demo job' }).click();
  await expect(page.getByRole('status')).toContainText(/Enqueued job #\d+/);
  // demo.sleep for 3 s: the job is seen running, then completed.
  await expect.poll(() => count(page, 'running')).toBeGreaterThanOrEqual(1);
  await expect.poll(() => count(page, 'completed'), { timeout: 30_000 }).toBe(completedBefore + 1);
});
