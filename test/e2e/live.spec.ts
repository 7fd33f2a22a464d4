import { expect, type Page, test } from '@playwright/test';
import { closeDb, enqueue } from './helpers';

test.afterAll(closeDb);

/** The API paths the page asks for, in order. */
function apiCalls(page: Page): string[] {
  const calls: string[] = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/api/')) calls.push(u.pathname);
  });
  return calls;
}
const countOf = (calls: string[], ...paths: string[]) => calls.filter((p) => paths.includes(p)).length;

/** A job (on the queue the e2e workers serve) still queued when the page opens: due in 2 s, then runs for 3 s. */
const laterJob = (request: import('@playwright/test').APIRequestContext) =>
  enqueue(request, { type: 'demo.sleep', payload: { ms: 3_000 }, runAt: new Date(Date.now() + 2_000).toISOString() });

test('the jobs page and the overview follow jobs through one live feed, not a request per query per refresh', async ({ page, request }) => {
  test.setTimeout(90_000);
  const calls = apiCalls(page);
  const id = await laterJob(request);
  await page.goto(`/jobs?id=${id}`);
  const row = page.getByTestId(`job-row-${id}`);
  await expect(row.getByTestId('job-status')).toHaveText('queued');
  await expect(row.getByTestId('job-status')).toHaveText('running', { timeout: 30_000 });
  await expect(row.getByTestId('job-status')).toHaveText('completed', { timeout: 30_000 });
  // The page's first load asks once for its rows and its "N new" count; after that only the
  // feed speaks (polling every 2 s would have asked at least twice each by now).
  expect(countOf(calls, '/api/live')).toBeGreaterThanOrEqual(1);
  expect(countOf(calls, '/api/jobs/lookup', '/api/jobs/newer'), calls.join(' ')).toBeLessThanOrEqual(3);

  calls.length = 0;
  await page.goto('/');
  await expect(page.getByTestId('count-completed')).toBeVisible();
  const done = Number((await page.getByTestId('count-completed').locator('dd').innerText()).replace(/[^0-9]/g, ''));
  await enqueue(request, { type: 'demo.sleep', payload: { ms: 50 } });
  await expect
    .poll(async () => Number((await page.getByTestId('count-completed').locator('dd').innerText()).replace(/[^0-9]/g, '')), { timeout: 30_000 })
    .toBeGreaterThan(done);
  expect(countOf(calls, '/api/live')).toBeGreaterThanOrEqual(1);
  expect(countOf(calls, '/api/stats'), calls.join(' ')).toBeLessThanOrEqual(2);
});

test('when the live feed is refused, the pages poll instead and still follow the job', async ({ page, request }) => {
  test.setTimeout(90_000);
  await page.route('**/api/live?**', (r) => r.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"code":"unavailable","message":"test"}}' }));
  const calls = apiCalls(page);
  const id = await laterJob(request);
  await page.goto(`/jobs?id=${id}`);
  const row = page.getByTestId(`job-row-${id}`);
  await expect(row.getByTestId('job-status')).toHaveText('running', { timeout: 30_000 });
  await expect(row.getByTestId('job-status')).toHaveText('completed', { timeout: 30_000 });
  expect(countOf(calls, '/api/jobs/lookup'), calls.join(' ')).toBeGreaterThanOrEqual(2);
});
