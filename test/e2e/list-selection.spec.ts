/**
 * The jobs list when a page of it fails to load, and "select all" beside rows that no longer
 * match the view: what is on screen stays, and an action takes in only what still matches.
 */
import { expect, test } from './test';
import { closeDb, db } from './helpers';

test.afterAll(closeDb);

/** `n` queued jobs on a queue of their own, which no e2e worker serves: they stay as written. */
async function waiting(queue: string, n: number): Promise<string[]> {
  const { rows } = await db().query(
    `INSERT INTO jobs (queue, type, payload) SELECT $1, 'demo.noop', '{}' FROM generate_series(1, $2) RETURNING job_id::text AS id`,
    [queue, n],
  );
  return rows.map((r) => r.id as string);
}

const listed = '[data-testid^="job-row-"]';

test('a failed "Load older jobs" keeps the rows loaded and says why beside the button; trying again loads them', async ({ page }) => {
  const queue = `older-${Date.now()}`;
  const ids = await waiting(queue, 60);
  await page.goto(`/jobs?queue=${queue}`);
  await expect(page.locator(listed)).toHaveCount(50);
  // The next page's request fails (the console restarting, a proxy's 502); the first page's do not.
  const nextPage = (url: URL) => url.pathname === '/api/jobs' && url.searchParams.has('cursor');
  await page.route(nextPage, (r) => r.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"code":"unavailable","message":"the console is restarting"}}' }));
  await page.getByRole('button', { name: 'Load older jobs' }).click();
  await expect(page.getByTestId('next-page-error')).toContainText('Could not load older jobs: the console is restarting');
  await expect(page.locator(listed), 'the rows loaded before stay').toHaveCount(50);
  await page.unroute(nextPage);
  await page.getByRole('button', { name: 'Load older jobs' }).click();
  await expect(page.locator(listed)).toHaveCount(60);
  await expect(page.getByTestId('next-page-error')).toHaveCount(0);
  await db().query(`UPDATE jobs SET status = 'cancelled', finished_at = now() WHERE job_id = ANY($1)`, [ids]);
});

test('"select all" leaves out a row that no longer matches the view; it can still be ticked by hand', async ({ page }) => {
  const queue = `selall-${Date.now()}`;
  const [a, b, c] = await waiting(queue, 3);
  await page.goto(`/jobs?queue=${queue}&status=queued`);
  await expect(page.locator(listed)).toHaveCount(3);
  // Another operator cancels one: the row stays, greyed, at the next refresh.
  await db().query(`UPDATE jobs SET status = 'cancelled', finished_at = now() WHERE job_id = $1`, [b]);
  await expect(page.getByTestId(`job-row-${b}`)).toContainText('no longer matches this view', { timeout: 30_000 });
  await page.getByRole('checkbox', { name: 'Select all rows on the page' }).check();
  await expect(page.getByTestId('selection-text')).toHaveText('2 selected');
  await expect(page.getByTestId(`job-row-${a}`).getByRole('checkbox')).toBeChecked();
  await expect(page.getByTestId(`job-row-${c}`).getByRole('checkbox')).toBeChecked();
  await expect(page.getByTestId(`job-row-${b}`).getByRole('checkbox')).not.toBeChecked();
  await expect(page.getByRole('checkbox', { name: 'Select all rows on the page' }), 'every row that matches is selected').toBeChecked();
  await page.getByTestId(`job-row-${b}`).getByRole('checkbox').check();
  await expect(page.getByTestId('selection-text')).toHaveText('3 selected');
  await page.getByRole('checkbox', { name: 'Select all rows on the page' }).uncheck();
  await expect(page.getByTestId('selection-text')).toHaveText(/^Select jobs to act on them/);
  await db().query(`UPDATE jobs SET status = 'cancelled', finished_at = now() WHERE job_id = ANY($1)`, [[a, c]]);
});
