import { expect, test } from './test';
import { closeDb, db, screenshot } from './helpers';

test.afterAll(closeDb);

test('the schedules page shows each recurring job: its cron, the next tick, and the job its last tick made', async ({ page }) => {
  test.setTimeout(90_000);
  const name = `e2e-every-second-${process.pid}`;
  await db().query(
    `INSERT INTO schedules (name, cron, timezone, queue, type, payload, max_attempts, next_run_at, enabled)
     VALUES ($1, '* * * * * *', 'UTC', 'default', 'demo.noop', '{}', 3, date_trunc('second', now()) + interval '1 second', true)`,
    [name],
  );
  try {
    await page.goto('/schedules');
    const row = page.getByTestId(`schedule-${name}`);
    await expect(row).toContainText('* * * * * *');
    await expect(row).toContainText('demo.noop');
    await expect(row.getByTestId('timezone')).toHaveText(' (UTC)');
    // The queue's consumers come from the overview's numbers (refreshed every 15 s on this
    // page): a console just started may not have seen the workers register yet.
    await expect(row.getByTestId('no-consumer')).toHaveCount(0, { timeout: 30_000 });
    // The e2e workers tick it every second: the link to the job of the last tick appears.
    const last = row.getByTestId('last-job');
    await expect(last).toBeVisible({ timeout: 30_000 });
    await screenshot(page, 'schedules');
    // The link follows the newest tick, one a second: the job is read from where the click
    // went, not from the link's text before it (a tick in between moved the link on).
    await last.click();
    await expect(page).toHaveURL(/\/jobs\/\d+$/);
    const id = new URL(page.url()).pathname.split('/').pop();
    const { rows } = await db().query(`SELECT idempotency_key FROM jobs WHERE job_id = $1`, [id]);
    expect(rows[0].idempotency_key).toMatch(new RegExp(`^schedule:${name}:`));
  } finally {
    await db().query(`DELETE FROM schedules WHERE name = $1`, [name]);
  }
});

test('a schedule whose due tick cannot be enqueued says why on its row, until a tick goes through', async ({ page }) => {
  test.setTimeout(90_000);
  const name = `e2e-cannot-tick-${process.pid}`;
  // Edited by hand to what a definition refuses (no job may have 0 attempts): every tick fails.
  await db().query(
    `INSERT INTO schedules (name, cron, timezone, queue, type, payload, max_attempts, next_run_at, enabled)
     VALUES ($1, '* * * * * *', 'UTC', 'default', 'demo.noop', '{}', 0, date_trunc('second', now()), true)`,
    [name],
  );
  try {
    await page.goto('/schedules');
    const row = page.getByTestId(`schedule-${name}`);
    await expect(row.getByTestId('tick-error')).toContainText(/cannot be enqueued.*attempt/, { timeout: 30_000 });
    await screenshot(page, 'schedule-tick-error');
    // The overview says so too, and leads to the page that says why.
    await page.goto('/');
    const notice = page.getByTestId('schedules-failing');
    await expect(notice).toContainText('cannot enqueue', { timeout: 30_000 });
    await notice.getByRole('link').click();
    await expect(page).toHaveURL(/\/schedules$/);
    await db().query(`UPDATE schedules SET max_attempts = 3 WHERE name = $1`, [name]);
    await expect(row.getByTestId('last-job')).toBeVisible({ timeout: 30_000 });
    await expect(row.getByTestId('tick-error')).toHaveCount(0);
  } finally {
    await db().query(`DELETE FROM schedules WHERE name = $1`, [name]);
  }
});

test('a schedule on a queue no live worker consumes says its jobs will wait', async ({ page }) => {
  const name = `e2e-unconsumed-${process.pid}`;
  await db().query(
    `INSERT INTO schedules (name, cron, timezone, queue, type, payload, max_attempts, next_run_at, enabled)
     VALUES ($1, '0 3 * * *', 'Europe/Paris', 'e2e-nobody-consumes', 'demo.noop', '{}', 3, now() + interval '1 day', true)`,
    [name],
  );
  try {
    await page.goto('/schedules');
    const row = page.getByTestId(`schedule-${name}`);
    await expect(row.getByTestId('timezone')).toHaveText(' (Europe/Paris)');
    await expect(row.getByTestId('no-consumer')).toContainText('No live worker consumes this queue');
  } finally {
    await db().query(`DELETE FROM schedules WHERE name = $1`, [name]);
  }
});

test('a schedule is paused, shown paused, resumed, and run now from its row; the run links to its job', async ({ page }) => {
  test.setTimeout(90_000);
  const name = `e2e-operated-${process.pid}`;
  // Daily at 03:00: no tick of its own comes while the test runs.
  await db().query(
    `INSERT INTO schedules (name, cron, timezone, queue, type, payload, max_attempts, next_run_at, enabled)
     VALUES ($1, '0 3 * * *', 'UTC', 'default', 'demo.noop', '{"from": "run now"}', 3, date_trunc('day', now()) + interval '1 day 3 hours', true)`,
    [name],
  );
  try {
    await page.goto('/schedules');
    const row = page.getByTestId(`schedule-${name}`);
    await expect(row.getByTestId('next-tick')).toContainText(/^in /);

    // Pause asks once, with a reason for the audit log.
    await row.getByRole('button', { name: 'Pause' }).click();
    const dialog = page.getByRole('dialog');
    // The reason is what the dialog asks for: it has the focus (Enter confirms), not the ✕.
    await expect(dialog.getByLabel('Reason')).toBeFocused();
    await dialog.getByLabel('Reason').fill('upstream is down');
    await dialog.getByRole('button', { name: 'Pause schedule' }).click();
    await expect(dialog).toHaveCount(0);
    await expect(row.getByTestId('paused-badge')).toHaveText('paused');
    await expect(row.getByTestId('next-tick')).toContainText(/^paused/);
    const paused = await db().query(`SELECT paused_at IS NOT NULL AS paused FROM schedules WHERE name = $1`, [name]);
    expect(paused.rows[0].paused).toBe(true);
    const audit = await db().query(`SELECT reason FROM audit_log WHERE action = 'schedule.pause' AND target->>'schedule' = $1`, [name]);
    expect(audit.rows.map((r) => r.reason)).toEqual(['upstream is down']);

    // Resume is one click; the countdown comes back.
    await row.getByRole('button', { name: 'Resume' }).click();
    await expect(row.getByTestId('paused-badge')).toHaveCount(0);
    await expect(row.getByTestId('next-tick')).toContainText(/^in /);
    await expect(row.getByRole('button', { name: 'Pause' })).toBeVisible();
    const tick = async () => (await db().query(`SELECT next_run_at FROM schedules WHERE name = $1`, [name])).rows[0].next_run_at.getTime();
    const tickBefore = await tick();

    // Run now: confirmed, then a link to the job it made.
    await row.getByRole('button', { name: 'Run now' }).click();
    await dialog.getByRole('button', { name: 'Run now' }).click();
    const link = dialog.getByTestId('ran-job');
    await expect(link).toContainText(/^job #\d+$/);
    await expect(row.getByTestId('run-now-job')).toContainText(/job #\d+/);
    await link.click();
    await expect(page).toHaveURL(/\/jobs\/\d+$/);
    const id = new URL(page.url()).pathname.split('/').pop();
    const { rows } = await db().query(`SELECT idempotency_key, type, payload FROM jobs WHERE job_id = $1`, [id]);
    expect(rows[0].idempotency_key).toMatch(new RegExp(`^schedule-run:${name}:`));
    expect([rows[0].type, rows[0].payload]).toEqual(['demo.noop', { from: 'run now' }]);
    // The run is not a tick: the schedule's own next tick did not move.
    expect(await tick()).toBe(tickBefore);
  } finally {
    await db().query(`DELETE FROM schedules WHERE name = $1`, [name]);
  }
});

// An operator adds a nightly job from the console, gets a mistyped cron back with the reason,
// moves it to another hour, then removes it: each step the same statement the CLI runs.
test('a schedule is added, refused with why when its cron is wrong, edited and removed from the page', async ({ page }) => {
  const name = `e2e-defined-${process.pid}`;
  try {
    await page.goto('/schedules');
    await page.getByRole('button', { name: 'New schedule…' }).click();
    const dialog = page.getByRole('dialog', { name: 'New schedule' });
    await dialog.getByLabel('Name').fill(name);
    await dialog.getByLabel('Cron').fill('0 25 * * *');
    // Named while typing, before Save: the server's own check (GET /api/cron).
    await expect(dialog.getByTestId('cron-preview-error')).toContainText('cron "0 25 * * *" (UTC)');
    await dialog.getByLabel('Job type').fill('demo.sleep');
    await dialog.getByLabel('Payload').fill('{"ms": 5}');
    await dialog.getByRole('combobox', { name: 'Priority' }).selectOption('4');
    await dialog.getByRole('button', { name: 'Add schedule' }).click();
    await expect(dialog.getByRole('alert')).toContainText('cron "0 25 * * *" (UTC)');
    expect((await db().query(`SELECT 1 FROM schedules WHERE name = $1`, [name])).rowCount).toBe(0);
    await dialog.getByLabel('Cron').fill('0 3 * * *');
    await expect(dialog.getByRole('alert')).toHaveCount(0);
    // Its next ticks, as the workers will run them: 03:00 each day.
    await expect(dialog.getByTestId('cron-preview')).not.toHaveAttribute('data-stale');
    await expect(dialog.getByTestId('cron-tick')).toHaveCount(3);
    await expect.poll(() => dialog.getByTestId('cron-tick').allTextContents()).toEqual([expect.stringMatching(/03:00:00 UTC$/), expect.stringMatching(/03:00:00 UTC$/), expect.stringMatching(/03:00:00 UTC$/)]);
    await expect(dialog.getByTestId('cron-preview-error')).toHaveCount(0);
    await screenshot(page, 'schedule-new');
    await dialog.getByRole('button', { name: 'Add schedule' }).click();
    await expect(dialog).toHaveCount(0);
    const row = page.getByTestId(`schedule-${name}`);
    await expect(row).toContainText('0 3 * * *');
    await expect(row.getByTestId('schedule-priority')).toHaveText('· priority 4');
    const stored = (await db().query(`SELECT payload, priority, max_attempts FROM schedules WHERE name = $1`, [name])).rows[0];
    expect(stored).toEqual({ payload: { ms: 5 }, priority: 4, max_attempts: 3 });
    // New schedule… with a name already taken is refused, not a silent replacement.
    await page.getByRole('button', { name: 'New schedule…' }).click();
    const again = page.getByRole('dialog', { name: 'New schedule' });
    await again.getByLabel('Name').fill(name);
    await again.getByLabel('Cron').fill('* * * * *');
    await again.getByLabel('Job type').fill('demo.noop');
    await again.getByRole('button', { name: 'Add schedule' }).click();
    await expect(again.getByRole('alert')).toContainText(`a schedule named "${name}" exists already`);
    await again.getByRole('button', { name: 'Back' }).click();
    expect((await db().query(`SELECT cron FROM schedules WHERE name = $1`, [name])).rows[0].cron).toBe('0 3 * * *');

    await row.getByRole('button', { name: `Edit schedule ${name}` }).click();
    const edit = page.getByRole('dialog', { name: `Edit schedule ${name}` });
    await expect(edit.getByLabel('Cron')).toHaveValue('0 3 * * *');
    await expect(edit.getByLabel('Payload')).toHaveValue('{\n  "ms": 5\n}');
    await edit.getByLabel('Cron').fill('30 4 * * *');
    await expect(row.getByTestId('schedule-overlap')).toHaveCount(0);
    await edit.getByRole('combobox', { name: 'While a run is unfinished' }).selectOption('skip');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect(edit).toHaveCount(0);
    await expect(row).toContainText('30 4 * * *');
    await expect(row.getByTestId('schedule-overlap')).toHaveText('· one run at a time');
    expect((await db().query(`SELECT overlap FROM schedules WHERE name = $1`, [name])).rows[0].overlap).toBe('skip');

    await row.getByRole('button', { name: `Remove schedule ${name}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Remove schedule' });
    await confirm.getByLabel('Reason').fill('moved to the report service');
    await confirm.getByRole('button', { name: 'Remove schedule' }).click();
    await expect(row).toHaveCount(0);
    expect((await db().query(`SELECT 1 FROM schedules WHERE name = $1`, [name])).rowCount).toBe(0);
    const audit = (await db().query(`SELECT action FROM audit_log WHERE target->>'schedule' = $1 ORDER BY audit_id`, [name])).rows.map((r) => r.action);
    expect(audit).toEqual(['schedule.add', 'schedule.add', 'schedule.remove']);
  } finally {
    await db().query(`DELETE FROM schedules WHERE name = $1`, [name]);
  }
});

// A sync that must never run twice at once: while its run waits (no worker serves its queue),
// the next tick is skipped and says so, and Run now answers the unfinished run.
test('a schedule that runs one at a time skips a tick while its run is unfinished, and Run now answers that run', async ({ page }) => {
  const name = `e2e-one-at-a-time-${process.pid}`;
  const queue = 'e2e-one-at-a-time-no-worker';
  try {
    await db().query(
      `INSERT INTO schedules (name, cron, queue, type, next_run_at, overlap) VALUES ($1, '0 0 1 1 *', $2, 'demo.noop', now() + interval '1 day', 'skip')`,
      [name, queue],
    );
    await page.goto('/schedules');
    const row = page.getByTestId(`schedule-${name}`);
    await expect(row.getByTestId('schedule-overlap')).toHaveText('· one run at a time');
    await row.getByRole('button', { name: `Run now: schedule ${name}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Run now' });
    await dialog.getByRole('button', { name: 'Run now' }).click();
    const first = (await dialog.getByTestId('ran-job').innerText()).replace('job #', '');
    await expect(dialog).toContainText(`Enqueued job #${first}.`);
    await dialog.getByRole('button', { name: 'Close' }).click();

    // Its tick comes due: a worker finds the run unfinished and moves on without a job.
    await db().query(`UPDATE schedules SET next_run_at = now() - interval '1 second' WHERE name = $1`, [name]);
    await expect(row.getByTestId('tick-skipped')).toContainText(`job #${first} was unfinished`, { timeout: 30_000 });
    await expect(row.getByTestId('tick-skipped').getByRole('link')).toHaveAttribute('href', `/jobs/${first}`);
    expect((await db().query(`SELECT count(*)::int AS n FROM jobs WHERE queue = $1`, [queue])).rows[0].n).toBe(1);

    // Not a double click (its key is let go): Run now answers the unfinished run.
    await db().query(`UPDATE jobs SET idempotency_key = NULL WHERE job_id = $1`, [first]);
    await row.getByRole('button', { name: `Run now: schedule ${name}` }).click();
    await dialog.getByRole('button', { name: 'Run now' }).click();
    await expect(dialog).toContainText(`It runs one at a time, and job #${first} is still unfinished; no second job was made.`);
    expect((await db().query(`SELECT count(*)::int AS n FROM jobs WHERE queue = $1`, [queue])).rows[0].n).toBe(1);

    // The overview counts it among the schedules skipping, and leads to the Schedules page.
    await page.goto('/');
    const skipping = page.getByTestId('schedules-skipping');
    await expect(skipping).toContainText(/skipped (its|their) latest tick/, { timeout: 30_000 });
    await skipping.getByRole('link').click();
    await expect(page.getByTestId(`schedule-${name}`).getByTestId('tick-skipped')).toBeVisible();
  } finally {
    await db().query(`UPDATE jobs SET status = 'cancelled', finished_at = now(), cancel_requested_at = now() WHERE queue = $1 AND status = 'queued'`, [queue]);
    await db().query(`DELETE FROM schedules WHERE name = $1`, [name]);
  }
});

test.describe('an operator in Kolkata', () => {
  test.use({ timezoneId: 'Asia/Kolkata' });
  test('the schedule dialog offers their own zone, and its ticks are read in the zone chosen', async ({ page }) => {
    await page.goto('/schedules');
    await page.getByRole('button', { name: 'New schedule…' }).click();
    const dialog = page.getByRole('dialog', { name: 'New schedule' });
    await expect(dialog.getByLabel('Time zone')).toHaveValue('UTC');
    await dialog.getByLabel('Cron').fill('30 9 * * 1-5');
    await expect(dialog.getByTestId('cron-tick').first()).toContainText('09:30:00 UTC');
    // Chromium may name the zone by its older alias (Asia/Calcutta): either is a zone the server knows.
    await dialog.getByRole('button', { name: /^Use mine \(Asia\/(Kolkata|Calcutta)\)$/ }).click();
    await expect(dialog.getByLabel('Time zone')).toHaveValue(/^Asia\/(Kolkata|Calcutta)$/);
    await expect(dialog.getByRole('button', { name: /^Use mine/ })).toHaveCount(0);
    // The ticks asked for in the new zone, not the old ones read in it.
    await expect(dialog.getByTestId('cron-preview')).not.toHaveAttribute('data-stale');
    const weekday0930 = expect.stringMatching(/^(?: · )?(Mon|Tue|Wed|Thu|Fri) \d\d [A-Z][a-z]{2}, 09:30:00 GMT\+5:30$/);
    await expect.poll(() => dialog.getByTestId('cron-tick').allTextContents()).toEqual([weekday0930, weekday0930, weekday0930]);
    // An H is the schedule's name's to fix: no ticks until it has one.
    await dialog.getByLabel('Cron').fill('H 9 * * *');
    await expect(dialog.getByTestId('cron-preview-unknown')).toContainText('name it to see its ticks');
    await dialog.getByLabel('Name').fill('kolkata-report');
    await expect(dialog.getByTestId('cron-preview')).not.toHaveAttribute('data-stale');
    await expect.poll(() => dialog.getByTestId('cron-tick').allTextContents()).toEqual([expect.stringMatching(/, 09:\d\d:00 GMT\+5:30$/), expect.stringMatching(/09:\d\d:00/), expect.stringMatching(/09:\d\d:00/)]);
    await dialog.getByRole('button', { name: 'Back' }).click();
  });
});
