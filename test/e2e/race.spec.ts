import { expect, test } from './test';
import { cancelQuietly, closeDb, db, enqueue, jobRow, waitForStatus } from './helpers';

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

test('an action on every job matching a filter acts on the jobs its preview listed: one that joined the filter since is left alone, one that left it is reported', async ({ page, request }) => {
  const queue = `e2e-race-filter-${Date.now()}`; // no worker serves it: its jobs stay queued
  const listed: string[] = [];
  for (let i = 0; i < 4; i++) listed.push(await enqueue(request, { type: 'demo.noop', queue }));
  const { rows } = await db().query(
    `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, finished_at, error)
     VALUES ($1, 'demo.noop', 'failed', '{}', 3, 3, 3, now(), 'failed before the preview (e2e)') RETURNING job_id::text AS id`,
    [queue],
  );
  const joiner: string = rows[0].id;
  await page.goto(`/jobs?status=queued&queue=${queue}`);
  await page.getByTestId(`job-row-${listed[0]}`).getByRole('checkbox').click();
  await page.getByRole('button', { name: 'Select every job matching this filter' }).click();
  await page.getByTestId('selection-bar').getByRole('button', { name: 'Cancel', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('preview-summary')).toContainText('4 jobs: 4 will change');

  // While the operator reads it: another operator requeues the failed job into the filter,
  // one of the listed jobs is cancelled, and another has been tried and now waits to retry
  // (it could still be cancelled, but it is not the job the operator was shown).
  expect((await request.post(`/api/jobs/${joiner}/requeue`, { data: {} })).status()).toBe(200);
  expect((await request.post(`/api/jobs/${listed[0]}/cancel`, { data: {} })).status()).toBe(200);
  await db().query(`UPDATE jobs SET status = 'retrying', attempt_count = 1, worker_id = 'e2e-gone', error = 'tried (e2e)' WHERE job_id = $1`, [listed[3]]);

  await dialog.getByRole('button', { name: 'Cancel 4 jobs' }).click();
  await expect(dialog.getByTestId('report-summary')).toContainText('2 changed, 2 skipped');
  await expect(dialog.getByTestId(`action-item-${listed[0]}`).getByTestId('item-reason')).toContainText('already cancelled');
  await expect(dialog.getByTestId(`action-item-${listed[3]}`).getByTestId('item-reason')).toHaveText(
    'changed since it was selected (queued, attempt 0; now retrying, attempt 1): left alone',
  );
  expect((await jobRow(listed[3]!)).status, 'the job that changed since the preview is left alone').toBe('retrying');
  expect((await jobRow(joiner)).status, 'the job the preview did not list is left alone').toBe('queued');
  await waitForStatus(listed[1]!, 'cancelled');
  await waitForStatus(listed[2]!, 'cancelled');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await cancelQuietly(request, joiner);
  await cancelQuietly(request, listed[3]!);
});
