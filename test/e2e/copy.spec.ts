import { insertJob } from '../factories';
import { expect, test } from './test';
import { cancelQuietly, closeDb, db, enqueue, jobRow, screenshot, waitForStatus } from './helpers';

test.afterAll(closeDb);

// A dead job whose input was wrong: the operator mends the payload in a copy and runs it,
// and the original stays in the dead letter as it ran, each job's timeline naming the other.
test('a dead job is copied with its payload mended: the copy runs, the original stays as it was', async ({ page }) => {
  const dead = await insertJob(db(), { status: 'failed', type: 'demo.sleep', payload: { ms: 'ten' }, attemptCount: 3, maxAttempts: 3 });
  await page.goto(`/jobs/${dead}`);
  await page.getByRole('button', { name: 'Enqueue a copy…' }).click();
  const dialog = page.getByRole('dialog', { name: `Enqueue a copy of job #${dead}` });
  const payload = dialog.getByRole('textbox', { name: 'Payload' });
  await expect(payload).toHaveValue('{"ms": "ten"}');
  // As it was, the type's schema refuses it: the server's reason, nothing enqueued.
  await dialog.getByRole('button', { name: 'Enqueue copy' }).click();
  await expect(dialog.getByRole('alert')).toContainText('payload.ms');
  // Edited, the server's answer to what was sent before no longer stands.
  await payload.fill('{"ms": 20');
  await expect(dialog.getByRole('alert')).toHaveCount(0);
  await dialog.getByRole('button', { name: 'Enqueue copy' }).click();
  await expect(dialog.getByRole('alert')).toContainText('The payload is not valid JSON');
  await payload.fill('{"ms": 20}');
  await expect(dialog.getByRole('alert')).toHaveCount(0);
  await dialog.getByLabel('Reason').fill('ms was a word');
  await screenshot(page, 'copy-dialog');
  await dialog.getByRole('button', { name: 'Enqueue copy' }).click();
  const made = dialog.getByTestId('copy-made').getByRole('link');
  await expect(made).toHaveText(/^#\d+$/);
  const copy = (await made.innerText()).slice(1);
  await waitForStatus(copy, 'completed');
  expect((await jobRow(copy)).payload).toEqual({ ms: 20 });
  expect((await jobRow(dead)).status).toBe('failed');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(page.getByTestId('timeline')).toContainText(new RegExp(`copied by .+ → job #${copy}`));
  await page.goto(`/jobs/${copy}`);
  await expect(page.getByTestId('timeline')).toContainText(`as a copy of job #${dead}`);
  await expect(page.getByTestId('timeline')).toContainText('reason: ms was a word');
});

// A backfill job enqueued at a low priority failed; the operator reruns it now, ahead of the backfill.
test("a job's priority shows in the list and on its page, and a copy can be given another", async ({ page }) => {
  const dead = await insertJob(db(), { status: 'failed', type: 'demo.noop', payload: {}, attemptCount: 3, maxAttempts: 3, priority: 6 });
  await page.goto('/jobs?type=demo.noop');
  const row = page.getByRole('row').filter({ hasText: `#${dead}` });
  await expect(row.getByTestId('priority')).toHaveText('p6');
  await page.goto(`/jobs/${dead}`);
  await expect(page.getByTestId('job-priority')).toHaveText('6 (runs after jobs of priority 0–5 that are due)');
  await page.getByRole('button', { name: 'Enqueue a copy…' }).click();
  const dialog = page.getByRole('dialog', { name: `Enqueue a copy of job #${dead}` });
  const priority = dialog.getByRole('combobox', { name: 'Priority' });
  await expect(priority).toHaveValue('6');
  await priority.selectOption('0');
  await dialog.getByRole('button', { name: 'Enqueue copy' }).click();
  const made = dialog.getByTestId('copy-made').getByRole('link');
  await expect(made).toHaveText(/^#\d+$/);
  const copy = (await made.innerText()).slice(1);
  await waitForStatus(copy, 'completed');
  expect((await jobRow(copy)).priority).toBe(0);
  await page.goto('/jobs?type=demo.noop');
  await expect(page.getByRole('row').filter({ hasText: `#${copy}` })).toBeVisible();
  await expect(page.getByRole('row').filter({ hasText: `#${copy}` }).getByTestId('priority')).toHaveCount(0);
  // The list's priority filter: the original stays in view, its copy at 0 leaves it.
  await page.getByRole('combobox', { name: 'Priority' }).selectOption('6');
  await expect(page).toHaveURL(/[?&]priority=6(&|$)/);
  await expect(page.getByRole('row').filter({ hasText: `#${dead}` })).toBeVisible();
  await expect(page.getByRole('row').filter({ hasText: `#${copy}` })).toHaveCount(0);
});

// Why does a job of priority 3 still wait? Its page says what claims of its queue take first.
test("a due waiting job's page says how many due jobs of its queue run before it", async ({ page }) => {
  const queue = 'e2e-in-line-no-worker'; // no worker serves it: the jobs stay waiting
  const made: string[] = [];
  try {
    for (const priority of [0, 0, 3]) made.push(await insertJob(db(), { queue, type: 'demo.noop', payload: {}, priority }));
    const mine = await insertJob(db(), { queue, type: 'demo.noop', payload: {}, priority: 3 });
    made.push(mine);
    await page.goto(`/jobs/${mine}`);
    await expect(page.getByTestId('job-in-line')).toHaveText('3 due jobs of its queue ahead of it: 2 of priority 0–2, then 1 of priority 3 that came due first');
    await page.goto(`/jobs/${made[0]}`);
    await expect(page.getByTestId('job-in-line')).toHaveText('first: no due job of its queue is ahead of it');
  } finally {
    await db().query('DELETE FROM jobs WHERE job_id = ANY($1::bigint[])', [made]);
  }
});

// A report scheduled for tomorrow is wanted now, ahead of the backlog; a job that has since
// finished cannot be moved, and the dialog says why instead of pretending.
test('a waiting job is rescheduled from its page: due now at a higher priority, it runs; a finished one is refused with why', async ({ page }) => {
  const later = await insertJob(db(), { type: 'demo.noop', payload: {}, runInMs: 86_400_000, priority: 5 });
  await page.goto(`/jobs/${later}`);
  await page.getByRole('button', { name: 'Reschedule…' }).click();
  const dialog = page.getByRole('dialog', { name: `Reschedule job #${later}` });
  const priority = dialog.getByRole('combobox', { name: 'Priority' });
  await expect(priority).toHaveValue('5');
  await expect(dialog.getByRole('button', { name: 'Reschedule' })).toBeDisabled(); // nothing changed yet
  await priority.selectOption('2');
  await dialog.getByLabel('Due').fill('2020-01-01T00:00');
  await dialog.getByLabel('Reason').fill('the customer is waiting');
  await screenshot(page, 'reschedule-dialog');
  await dialog.getByRole('button', { name: 'Reschedule' }).click();
  await expect(dialog).toHaveCount(0);
  await waitForStatus(later, 'completed');
  expect((await jobRow(later)).priority).toBe(2);
  await expect(page.getByTestId('timeline')).toContainText(/rescheduled by .+ \(due .+, priority 2\)/);
  await expect(page.getByRole('button', { name: 'Reschedule…' })).toBeDisabled();

  // The job finishes while the dialog is open: the server refuses, and says why.
  const raced = await insertJob(db(), { type: 'demo.noop', payload: {}, runInMs: 86_400_000, priority: 3 });
  await page.goto(`/jobs/${raced}`);
  await page.getByRole('button', { name: 'Reschedule…' }).click();
  const again = page.getByRole('dialog', { name: `Reschedule job #${raced}` });
  await again.getByRole('combobox', { name: 'Priority' }).selectOption('0');
  await db().query(`UPDATE jobs SET status = 'cancelled', finished_at = now() WHERE job_id = $1`, [raced]);
  await again.getByRole('button', { name: 'Reschedule' }).click();
  await expect(again.getByRole('alert')).toContainText('already cancelled: only a waiting job (queued or retrying) can be rescheduled');
  expect((await jobRow(raced)).priority).toBe(3);
});

// One digest per user at a time: a dead one cannot come back while another waits to run.
test("a job's singleton key shows on its page with the job holding it, and its requeue and copy wait for that job, saying so", async ({ page, request }) => {
  const queue = 'e2e-singleton-no-worker'; // no worker serves it: the holder stays queued
  const holder = await enqueue(request, { type: 'demo.noop', queue, singletonKey: 'digest:user:7' });
  try {
    const { rows } = await db().query(
      `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, finished_at, error, singleton_key)
       VALUES ($1, 'demo.noop', 'failed', '{}', 3, 3, 3, now(), 'failed (e2e)', 'digest:user:7') RETURNING job_id::text AS id`,
      [queue],
    );
    const dead: string = rows[0].id;
    await page.goto(`/jobs/${dead}`);
    const key = page.getByTestId('job-singleton-key');
    await expect(key).toContainText('digest:user:7');
    await expect(key.getByRole('link', { name: `job ${holder}` })).toHaveAttribute('href', `/jobs/${holder}`);
    await screenshot(page, 'job-singleton-key');
    // The server would refuse both (the requeue skips it, the copy is a 409): said on the buttons.
    for (const [testid, verb] of [['requeue-button', 'requeue'], ['copy-button', 'copy']]) {
      await expect(page.getByTestId(testid!)).toBeDisabled();
      await expect(page.getByTestId(testid!)).toHaveAccessibleDescription(`job ${holder} holds its singleton key: ${verb} this one once that one has finished`);
    }
    await page.goto(`/jobs/${holder}`);
    await expect(page.getByTestId('job-singleton-key')).toContainText('held by this job');
    // A copy of the holder itself would take the key it holds.
    await expect(page.getByTestId('copy-button')).toHaveAccessibleDescription('this job holds its singleton key (it is queued): copy it once it has finished');
  } finally {
    await cancelQuietly(request, holder);
  }
});
