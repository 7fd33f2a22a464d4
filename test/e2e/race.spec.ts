import { expect, test } from '@playwright/test';
import { cancelQuietly, closeDb, db, jobRow, waitForStatus } from './helpers';

test.afterAll(closeDb);

test('a requeue raced against a worker is refused with its reason', async ({ page, request }) => {
  // A job backing off after a failure (retrying, due in an hour): requeue is allowed.
  const { rows } = await db().query(
    `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, run_at, error)
     VALUES ('default', 'demo.sleep', 'retrying', '{"ms": 60000}', 1, 3, 3, now() + interval '1 hour', 'first attempt failed (e2e)')
     RETURNING job_id::text AS id`,
  );
  const id: string = rows[0].id;
  await page.goto(`/jobs/${id}`);
  await expect(page.getByTestId('job-status').first()).toContainText('retrying');
  await page.getByRole('button', { name: 'Requeue' }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('preview-summary')).toContainText('1 will change');
  await expect(dialog.getByTestId(`action-item-${id}`)).toContainText('retrying → queued');

  // While the operator reads the preview, the job falls due and a worker claims it.
  await db().query(`UPDATE jobs SET run_at = now() WHERE job_id = $1`, [id]);
  await waitForStatus(id, 'running');
  const owner: string = (await jobRow(id)).worker_id;

  // The confirmation meets a live lease: the CAS refuses, and the report says why.
  await dialog.getByRole('button', { name: 'Requeue 1 job' }).click();
  await expect(dialog.getByTestId('report-summary')).toContainText('0 changed, 1 skipped');
  const reason = dialog.getByTestId(`action-item-${id}`).getByTestId('item-reason');
  await expect(reason).toHaveText(new RegExp(`^lease still held by ${owner.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} for \\d+ s \\(revoke the lease to take it back\\)$`));
  const after = await jobRow(id);
  expect(after.status).toBe('running');
  expect(after.worker_id).toBe(owner);
  expect(after.attempt_count).toBe(2);
  await dialog.getByRole('button', { name: 'Close' }).click();
  await cancelQuietly(request, id);
});
