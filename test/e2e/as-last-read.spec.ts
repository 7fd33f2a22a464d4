/**
 * While refresh is paused, a page shows what it last read and says so: a lease or a worker
 * whose time passed since the read is "not refreshed", never "expired" or "stale" (which
 * would blame a live worker). And a job with a big payload renders only what is open.
 */
import { expect, test } from './test';
import { closeDb, db } from './helpers';

test.afterAll(closeDb);

/** Runs `renew` every 300 ms until the returned stop() (a worker that keeps reporting, then goes quiet). */
function keepRenewing(renew: () => Promise<unknown>) {
  let on = true;
  const loop = (async () => {
    while (on) {
      await renew();
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  return async () => {
    on = false;
    await loop;
  };
}

test('paused, a lease whose end passed since the read is "not refreshed", not "expired"', async ({ page }) => {
  const { rows } = await db().query(
    `INSERT INTO jobs (queue, type, status, payload, attempt_count, worker_id, heartbeat_at, lease_expires_at, started_at)
     VALUES ('e2e-as-read', 'demo.sleep', 'running', '{"ms":1}', 1, 'e2e-ghost:1:abc', now(), now() + interval '3 seconds', now()) RETURNING job_id`,
  );
  const id = String(rows[0].job_id);
  // Its "worker" renews the lease (3 s at a time) until the page is paused, then stops.
  const stop = keepRenewing(() => db().query(`UPDATE jobs SET heartbeat_at = now(), lease_expires_at = now() + interval '3 seconds' WHERE job_id = $1`, [id]));
  await page.goto(`/jobs/${id}`);
  await expect(page.getByTestId('lease-countdown')).toBeVisible();
  await page.getByRole('button', { name: 'Pause' }).click();
  await stop();
  await expect(page.getByTestId('refresh-state')).toContainText('paused');
  await expect(page.getByTestId('lease-unseen')).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId('lease-expired')).toHaveCount(0);
  await expect(page.getByText('stopped renewing this lease')).toHaveCount(0);
  await page.getByRole('button', { name: 'Resume' }).click();
});

test('paused, a worker silent since the read for longer than a lease is "not refreshed", not "stale"', async ({ page }) => {
  await db().query(
    `INSERT INTO workers (worker_id, host, pid, queues, concurrency, started_at, heartbeat_at)
     VALUES ('e2e-host:4343:quiet', 'e2e-host', 4343, '{default}', 1, now() - interval '1 minute', now())
     ON CONFLICT (worker_id) DO UPDATE SET heartbeat_at = now(), stopped_at = NULL`,
  );
  // It reports until the page is paused, then goes quiet; a lease (10 s in e2e) later it is past it.
  const stop = keepRenewing(() => db().query(`UPDATE workers SET heartbeat_at = now() WHERE worker_id = 'e2e-host:4343:quiet'`));
  try {
    await page.goto('/workers');
    const row = page.getByTestId('worker-e2e-host:4343:quiet');
    await expect(row).toContainText('live');
    await page.getByRole('button', { name: 'Pause' }).click();
    await stop();
    await expect(row.getByTestId('worker-unseen')).toBeVisible({ timeout: 30_000 });
    await expect(row).not.toContainText('stale');
    await page.getByRole('button', { name: 'Resume' }).click();
  } finally {
    await stop();
    await db().query(`DELETE FROM workers WHERE worker_id = 'e2e-host:4343:quiet'`);
  }
});

test('a job with a big payload renders only the open part of it', async ({ page }) => {
  // About 300 KB: 15,000 rows, one array the tree shows collapsed.
  const payload = { rows: Array.from({ length: 15_000 }, (_, i) => ({ i, name: `row ${i}` })) };
  const { rows } = await db().query(
    `INSERT INTO jobs (queue, type, status, payload, attempt_count, started_at, finished_at)
     VALUES ('e2e-big', 'demo.noop', 'completed', $1::jsonb, 1, now(), now()) RETURNING job_id`,
    [JSON.stringify(payload)],
  );
  await page.goto(`/jobs/${rows[0].job_id}`);
  const view = page.getByTestId('payload');
  await expect(view).toContainText('15000 items');
  expect(await view.locator('*').count(), 'elements in the payload view').toBeLessThan(200);
  // Opened, its rows come 200 at a time.
  await view.getByText('15000 items').click();
  await expect(view).toContainText('"row 199"');
  await expect(view).not.toContainText('"row 200"');
  await view.getByRole('button', { name: 'show 200 more (14,800 not shown)' }).click();
  await expect(view).toContainText('"row 399"');
});
