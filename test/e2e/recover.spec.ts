import { expect, test } from './test';
import type pg from 'pg';
import { cancelQuietly, closeDb, db, enqueue, jobRow, screenshot, waitForStatus } from './helpers';

test.afterAll(closeDb);

test('the recover preview lists a job whose lease expired; applying it brings the job back', async ({ page, request }) => {
  // The workers' own sweep runs every second and would recover the job before anyone
  // looks. It runs under a cluster-wide advisory lock: holding that lock here pauses it,
  // so the operator is the one who recovers. And an idle worker takes over an expired
  // lease by itself, except in a paused queue: the job's queue is paused while it runs.
  const sweepLock: pg.PoolClient = await db().connect();
  const queue = 'default'; // the only queue the e2e workers serve; specs run one at a time
  const pause = async (paused: boolean) => expect((await request.post(`/api/queues/${queue}`, { data: { paused } })).status()).toBe(200);
  let id = '';
  try {
    await sweepLock.query(`SELECT pg_advisory_lock(hashtext('leasehold.recover'))`);
    id = await enqueue(request, { type: 'demo.sleep', payload: { ms: 60_000 } });
    await waitForStatus(id, 'running');
    await pause(true);
    // Its worker "dies": the lease names a worker that no longer exists and has run out.
    // (The real worker's next heartbeat no longer matches the fence and it drops the job.)
    await db().query(`UPDATE jobs SET worker_id = 'e2e-dead-worker', lease_expires_at = now() - interval '1 second' WHERE job_id = $1`, [id]);

    await page.goto(`/jobs/${id}`);
    await expect(page.getByTestId('lease-expired')).toHaveText('expired — will be recovered');
    await page.goto('/');
    await expect(page.getByTestId('running-expired')).toContainText(/^[1-9]/);
    await page.getByRole('button', { name: 'Recover…' }).click();
    const dialog = page.getByRole('dialog');
    const item = dialog.getByTestId(`action-item-${id}`);
    await expect(item).toContainText('e2e-dead-worker');
    await expect(item).toContainText(/lease of e2e-dead-worker expired \d+ s ago → retrying/);
    await screenshot(page, 'recover-preview');
    await dialog.getByRole('button', { name: /^Recover \d+ jobs?$/ }).click();
    await expect(dialog.getByTestId('action-report').getByTestId(`action-item-${id}`)).toContainText('recovered');
    await dialog.getByRole('button', { name: 'Close' }).click();
  } finally {
    await sweepLock.query(`SELECT pg_advisory_unlock(hashtext('leasehold.recover'))`).catch(() => {});
    sweepLock.release();
    await pause(false);
  }
  // Back in the queue, claimed again by a live worker: attempt 2, and attempt 1 is on record as lost.
  await expect.poll(async () => (await jobRow(id)).attempt_count, { timeout: 20_000 }).toBe(2);
  await waitForStatus(id, 'running');
  expect((await jobRow(id)).worker_id).not.toBe('e2e-dead-worker');
  const { rows } = await db().query(`SELECT outcome, worker_id FROM job_attempts WHERE job_id = $1 AND attempt = 1`, [id]);
  expect(rows[0]).toEqual({ outcome: 'lease_lost', worker_id: 'e2e-dead-worker' });
  await page.goto(`/jobs/${id}`);
  await expect(page.getByTestId('attempt-1')).toContainText('lease lost');
  await expect(page.getByTestId('attempt-2')).toContainText('running');
  await cancelQuietly(request, id);
});
