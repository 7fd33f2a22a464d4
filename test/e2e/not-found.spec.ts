/**
 * Addresses that name nothing: a page that does not exist and a job id that is not one are
 * answered 404 (what a link checker or a script reads), with a page that says so; a
 * well-formed id of a job that does not exist loads the job page, which says there is none.
 */
import { expect, test } from './test';

test('a mistyped job id and an unknown page are 404s that say so; an unknown job says there is none', async ({ page }) => {
  for (const path of ['/jobs/abc', '/jobs/-1', '/jobs/99999999999999999999']) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBe(404);
    await expect(page.getByText('No such job'), path).toBeVisible();
    await expect(page.getByRole('link', { name: 'Search the jobs' })).toHaveAttribute('href', '/jobs');
  }
  const res = await page.goto('/no-such-page');
  expect(res?.status()).toBe(404);
  await expect(page.getByText('No such page')).toBeVisible();

  const unknown = '9000000000000000000';
  expect((await page.goto(`/jobs/${unknown}`))?.status()).toBe(200);
  await expect(page.getByText(`No job #${unknown}`)).toBeVisible();
});
