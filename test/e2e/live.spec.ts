import { type Page } from '@playwright/test';
import { expect, test } from './test';
import { closeDb, db, enqueue, statusCount } from './helpers';

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

/**
 * A job (on the queue the e2e workers serve) still queued when the page has opened, even
 * on a busy machine: due in 15 s, then runs for 3 s.
 */
const laterJob = (request: import('@playwright/test').APIRequestContext) =>
  enqueue(request, { type: 'demo.sleep', payload: { ms: 3_000 }, runAt: new Date(Date.now() + 15_000).toISOString() });

/** Resolves when the page's live feed has answered (its headers: the stream is open). */
const feedOpened = (page: Page) => page.waitForResponse((r) => new URL(r.url()).pathname === '/api/live' && r.status() === 200);

test('the jobs page and the overview follow jobs through one live feed, not a request per query per refresh', async ({ page, request }) => {
  test.setTimeout(120_000);
  const calls = apiCalls(page);
  const id = await laterJob(request);
  const opened = feedOpened(page);
  await page.goto(`/jobs?id=${id}`);
  await opened;
  const status = page.getByTestId(`job-row-${id}`).getByTestId('job-status');
  await expect(status).toHaveText('queued');
  // From here only the feed speaks: polling every 2 s would ask for the rows and the
  // "N new" count about ten times each while the job waits, runs and completes.
  calls.length = 0;
  await expect(status).toHaveText('running', { timeout: 45_000 });
  await expect(status).toHaveText('completed', { timeout: 30_000 });
  expect(countOf(calls, '/api/jobs/lookup', '/api/jobs/newer'), calls.join(' ')).toBeLessThanOrEqual(3);

  const overviewOpened = feedOpened(page);
  await page.goto('/');
  await overviewOpened;
  const completed = () => statusCount(page, 'completed');
  await expect(page.getByTestId('count-completed')).toBeVisible();
  const before = await completed();
  calls.length = 0;
  // Due in 8 s: polling would ask for the stats four times or more before the count moves.
  await enqueue(request, { type: 'demo.sleep', payload: { ms: 50 }, runAt: new Date(Date.now() + 8_000).toISOString() });
  await expect.poll(completed, { timeout: 45_000 }).toBeGreaterThan(before);
  expect(countOf(calls, '/api/stats'), calls.join(' ')).toBeLessThanOrEqual(2);
});

test("a job's page and the workers page follow through the live feed too", async ({ page, request }) => {
  test.setTimeout(120_000);
  const calls = apiCalls(page);
  const id = await laterJob(request);
  const opened = feedOpened(page);
  await page.goto(`/jobs/${id}`);
  await opened;
  const status = page.getByTestId('job-status').first();
  await expect(status).toContainText('queued');
  // Polling every 2 s would ask for the job and its audit entries about ten times each.
  calls.length = 0;
  await expect(status).toContainText('running', { timeout: 45_000 });
  await expect(page.getByTestId('lease-panel')).toBeVisible();
  await expect(status).toContainText('completed', { timeout: 30_000 });
  await expect(page.getByTestId('attempt-1')).toContainText('completed');
  expect(countOf(calls, `/api/jobs/${id}`, '/api/audit'), calls.join(' ')).toBeLessThanOrEqual(3);

  const workersOpened = feedOpened(page);
  await page.goto('/workers');
  await workersOpened;
  await expect(page.getByRole('heading', { name: 'Workers' })).toBeVisible();
  calls.length = 0;
  // A worker row that comes and goes shows up and leaves pushed: polling would need a
  // request for each.
  const workerId = `e2e-host:${process.pid}:live-feed`;
  const row = page.getByTestId(`worker-${workerId}`);
  await db().query(
    `INSERT INTO workers (worker_id, host, pid, queues, concurrency, started_at, heartbeat_at) VALUES ($1, 'e2e-host', $2, '{default}', 2, now(), now())`,
    [workerId, process.pid],
  );
  try {
    await expect(row).toBeVisible({ timeout: 30_000 });
  } finally {
    await db().query(`DELETE FROM workers WHERE worker_id = $1`, [workerId]);
  }
  await expect(row).toHaveCount(0, { timeout: 30_000 });
  expect(countOf(calls, '/api/workers'), calls.join(' ')).toBeLessThanOrEqual(1);
});

test('when the live feed is refused, the pages poll instead and still follow the job', async ({ page, request }) => {
  test.setTimeout(90_000);
  await page.route('**/api/live?**', (r) => r.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"code":"unavailable","message":"test"}}' }));
  const calls = apiCalls(page);
  const id = await laterJob(request);
  await page.goto(`/jobs?id=${id}`);
  const row = page.getByTestId(`job-row-${id}`);
  await expect(row.getByTestId('job-status')).toHaveText('running', { timeout: 45_000 });
  await expect(row.getByTestId('job-status')).toHaveText('completed', { timeout: 30_000 });
  expect(countOf(calls, '/api/jobs/lookup'), calls.join(' ')).toBeGreaterThanOrEqual(2);
});

test('one browser streams in at most three pages; the others poll, and one streams once a slot frees', async ({ context }) => {
  test.setTimeout(120_000);
  // Six pages: without the cap their streams would hold all six of the browser's
  // connections to the host, and the click below would wait for one to end (up to 60 s).
  const pages = await Promise.all([0, 1, 2, 3, 4, 5].map(() => context.newPage()));
  const calls = pages.map(apiCalls);
  for (const [k, p] of pages.entries()) {
    await p.goto('/');
    await expect(p.getByTestId('count-completed')).toBeVisible();
    if (k < 3) await expect.poll(() => countOf(calls[k]!, '/api/live')).toBeGreaterThanOrEqual(1);
  }
  // The fourth and later: no stream, so they poll the stats at the refresh interval.
  for (const k of [3, 4, 5]) {
    await expect.poll(() => countOf(calls[k]!, '/api/stats'), { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    expect(countOf(calls[k]!, '/api/live')).toBe(0);
  }
  // A click in any of them is answered at once: connections are left for it.
  const answered = await pages[5]!.evaluate(async () => {
    const t = performance.now();
    const status = (await fetch('/api/console')).status;
    return { status, ms: performance.now() - t };
  });
  expect(answered.status).toBe(200);
  expect(answered.ms).toBeLessThan(10_000);
  // Closing a streaming page frees its slot: a polling one streams within its next try.
  await pages[0]!.close();
  await expect.poll(() => [3, 4, 5].reduce((n, k) => n + countOf(calls[k]!, '/api/live'), 0), { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
  for (const p of pages.slice(1)) await p.close();
});

test('a server that stops answering (requests held, never failed) turns the header red: "Server not answering", not "Live"', async ({ page }) => {
  test.setTimeout(120_000);
  // No stream: the page polls, as it does once a quiet stream is dropped.
  await page.route('**/api/live?**', (r) => r.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"code":"unavailable","message":"test"}}' }));
  await page.goto('/jobs');
  await expect(page.getByTestId('refresh-state')).toHaveText(/^Live · every/);
  // From now on every API request waits for ever, as on a console process that was stopped.
  const held: (() => void)[] = [];
  await page.route('**/api/**', (r) => void new Promise<void>((resolve) => held.push(resolve)).then(() => r.abort().catch(() => {})));
  // The rule (lib/api/connection.ts): nothing replied for 15 s, and a 2 s poll has waited 5 s.
  // Here (the e2e list is often empty) that poll is the first page read again: a read that
  // cancelled the one still awaited for the next left only the stats' 15 s poll to count, and
  // this took up to 48 s. Twice the rule's 15 s, for a busy machine.
  const stoppedAt = Date.now();
  await expect(page.getByTestId('refresh-state')).toHaveText(/^Server not answering · last update \d+ s ago$/, { timeout: 30_000 });
  // Not early: the last reply came at most one 2 s poll before the stop.
  expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(12_000);
  // Answering again: Live.
  await page.unroute('**/api/**');
  for (const release of held.splice(0)) release();
  await expect(page.getByTestId('refresh-state')).toHaveText(/^Live · every/, { timeout: 30_000 });
});
