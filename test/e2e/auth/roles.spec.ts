/**
 * With sign-in on, the console knows the signed-in role: a write button the role may not
 * use is shown (so people learn the action exists) but disabled, saying why on hover (title)
 * and to assistive technology (its accessible description). The server still refuses.
 */
import { type Locator, type Page } from '@playwright/test';
import { expect, test } from '../test';
import { hashPassword } from '../../../lib/auth/passwords';
import { scheduleUpsert } from '../../../lib/queue/ops';
import { closeDb, db } from '../helpers';

test.afterAll(closeDb);

const QUEUE = `roles-q-${Date.now()}`;
const TYPE = 'roles.missing-handler';

async function user(name: string, role: string) {
  await db().query(
    `INSERT INTO users (name, role, password_hash) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO UPDATE SET role = EXCLUDED.role, password_hash = EXCLUDED.password_hash, disabled_at = NULL`,
    [name, role, await hashPassword(`${name}-password-123`)],
  );
}

/** A failed job (the dead letter) and a queued one no worker has a handler for (it stays on the overview's queue table). */
async function jobs(): Promise<{ failed: string; queued: string }> {
  const { rows: f } = await db().query(
    `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, started_at, finished_at, error)
     VALUES ($1, $2, 'failed', '{}'::jsonb, 1, 1, 1, now(), now(), 'roles: no such handler') RETURNING job_id`,
    [QUEUE, TYPE],
  );
  const { rows: q } = await db().query(`INSERT INTO jobs (queue, type, status, payload) VALUES ($1, $2, 'queued', '{}'::jsonb) RETURNING job_id`, [QUEUE, TYPE]);
  return { failed: String(f[0].job_id), queued: String(q[0].job_id) };
}

async function signIn(page: Page, name: string) {
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Password').fill(`${name}-password-123`);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Shown, disabled, and saying why: in its accessible description and in a tooltip on it or its wrapper. */
async function refused(button: Locator, why: RegExp) {
  await expect(button).toBeVisible();
  await expect(button).toBeDisabled();
  await expect(button).toHaveAccessibleDescription(why);
  const title = await button.evaluate((b) => (b.closest('[title]') as HTMLElement | null)?.title ?? '');
  expect(title).toMatch(why);
}

test("a viewer sees every write button disabled, with why; the server still refuses", async ({ page }) => {
  await user('vina', 'viewer');
  const { failed, queued } = await jobs();
  await page.goto(`/jobs/${failed}`);
  await signIn(page, 'vina');
  await expect(page).toHaveURL(new RegExp(`/jobs/${failed}$`));
  await expect(page.getByTestId('signed-in-as')).toContainText('vina · viewer');

  // One job's page.
  await refused(page.getByRole('button', { name: 'Requeue', exact: true }), /Viewers cannot requeue.*ask an operator/);
  await refused(page.getByRole('button', { name: 'Recover', exact: true }), /Viewers cannot recover/);
  await refused(page.getByRole('button', { name: 'Delete', exact: true }), /Viewers cannot delete.*ask an admin/);
  // The role is the reason given, before the job's state (a failed job cannot be cancelled either).
  await refused(page.getByRole('button', { name: 'Cancel', exact: true }), /Viewers cannot cancel/);
  await refused(page.getByRole('button', { name: 'Reschedule…' }), /Viewers cannot reschedule.*ask an operator/);

  // The jobs list: selecting still works (to copy ids, to look); the actions on the selection say why they are off.
  await page.goto(`/jobs?queue=${encodeURIComponent(QUEUE)}`);
  await page.getByRole('checkbox', { name: `Select job ${failed}` }).check();
  const bar = page.getByTestId('selection-bar');
  for (const [name, why] of [
    ['Requeue', /Viewers cannot requeue/],
    ['Cancel', /Viewers cannot cancel/],
    ['Recover', /Viewers cannot recover/],
    ['Delete', /Viewers cannot delete/],
  ] as const) {
    await refused(bar.getByRole('button', { name, exact: true }), why);
  }
  // Saved views: a viewer opens them, but saving the filters as one is off.
  await page.getByTestId('saved-views').getByRole('button', { name: /^Views/ }).click();
  await refused(page.getByRole('button', { name: 'Save current filters…' }), /Viewers cannot save views.*ask an operator/);
  await page.keyboard.press('Escape');

  // The dead letter's group actions.
  await page.goto('/dead-letter');
  const group = page.getByTestId('dead-letter-groups').getByRole('row').filter({ hasText: TYPE });
  await refused(group.getByRole('button', { name: /^Requeue group/ }), /Viewers cannot requeue/);
  await refused(group.getByRole('button', { name: /^Delete group/ }), /Viewers cannot delete/);

  // The overview: Recover, the demo enqueue, and the queue's Pause.
  await page.goto('/');
  await refused(page.getByRole('button', { name: 'Recover…' }), /Viewers cannot recover/);
  await refused(page.getByRole('button', { name: 'Enqueue demo job' }), /Viewers cannot enqueue/);
  await refused(page.getByTestId(`queue-${QUEUE}`).getByRole('button', { name: `Pause queue ${QUEUE}` }), /Viewers cannot pause/);

  // The schedules page: Run now and Pause.
  await scheduleUpsert(db(), { name: 'roles-nightly', cron: '0 3 * * *', type: 'demo.noop', queue: QUEUE });
  await page.goto('/schedules');
  const schedule = page.getByTestId('schedule-roles-nightly');
  await refused(schedule.getByRole('button', { name: 'Run now: schedule roles-nightly' }), /Viewers cannot run schedules.*ask an operator/);
  await refused(schedule.getByRole('button', { name: 'Pause schedule roles-nightly' }), /Viewers cannot pause schedules/);
  await refused(schedule.getByRole('button', { name: 'Edit schedule roles-nightly' }), /Viewers cannot define schedules/);
  await refused(schedule.getByRole('button', { name: 'Remove schedule roles-nightly' }), /Viewers cannot remove schedules/);
  await refused(page.getByRole('button', { name: 'New schedule…' }), /Viewers cannot define schedules/);

  // The server is the guard: a request crafted from the viewer's own session is refused.
  const origin = new URL(page.url()).origin;
  for (const [path, data] of [
    ['/api/actions/requeue', { ids: [failed] }],
    [`/api/jobs/${queued}/cancel`, {}],
    [`/api/queues/${encodeURIComponent(QUEUE)}`, { paused: true }],
    ['/api/schedules/roles-nightly/run', {}],
    [`/api/jobs/${queued}/reschedule`, { priority: 9 }],
  ] as const) {
    expect((await page.request.post(path, { data, headers: { origin } })).status(), path).toBe(403);
  }
  expect((await page.request.put('/api/schedules/roles-nightly', { data: { cron: '* * * * *', type: 'demo.noop' }, headers: { origin } })).status()).toBe(403);
  expect((await page.request.delete('/api/schedules/roles-nightly', { headers: { origin } })).status()).toBe(403);
  expect((await db().query(`SELECT cron FROM schedules WHERE name = 'roles-nightly'`)).rows[0].cron).toBe('0 3 * * *');
  expect((await db().query('SELECT status FROM jobs WHERE job_id = $1', [failed])).rows[0].status).toBe('failed');
});

test('an operator has the actions; Delete, which needs an admin, says so', async ({ page }) => {
  await user('opal', 'operator');
  const { failed } = await jobs();
  await page.goto(`/jobs/${failed}`);
  await signIn(page, 'opal');
  await expect(page.getByTestId('signed-in-as')).toContainText('opal · operator');
  await expect(page.getByRole('button', { name: 'Requeue', exact: true })).toBeEnabled();
  await expect(page.getByRole('button', { name: 'Requeue', exact: true })).toHaveAccessibleDescription('');
  await refused(page.getByRole('button', { name: 'Delete', exact: true }), /Operators cannot delete.*ask an admin/);

  await page.goto('/');
  await expect(page.getByRole('button', { name: 'Recover…' })).toBeEnabled();
  await expect(page.getByTestId(`queue-${QUEUE}`).getByRole('button', { name: `Pause queue ${QUEUE}` })).toBeEnabled();
  await scheduleUpsert(db(), { name: 'roles-nightly', cron: '0 3 * * *', type: 'demo.noop', queue: QUEUE });
  await page.goto('/schedules');
  await expect(page.getByTestId('schedule-roles-nightly').getByRole('button', { name: 'Run now: schedule roles-nightly' })).toBeEnabled();
});

test('a role lowered while the page is open: the first refusal reads the role again, and the buttons follow at once', async ({ page }) => {
  await user('omar', 'operator');
  const { failed } = await jobs();
  await page.goto(`/jobs/${failed}`);
  await signIn(page, 'omar');
  await expect(page.getByTestId('signed-in-as')).toContainText('omar · operator');
  const requeue = page.getByRole('button', { name: 'Requeue', exact: true });
  await expect(requeue).toBeEnabled();
  // An admin demotes omar meanwhile; the page still holds the role it read (cached a minute).
  await db().query(`UPDATE users SET role = 'viewer' WHERE name = 'omar'`);
  await Promise.all([page.waitForResponse((r) => r.status() === 403 && r.url().includes('/api/')), requeue.click()]);
  await page.keyboard.press('Escape');
  await refused(page.getByRole('button', { name: 'Requeue', exact: true }), /Viewers cannot requeue/);
  await expect(page.getByTestId('signed-in-as')).toContainText('omar · viewer');
});

test('a role raised while the page is open: the buttons it allows are enabled within the minute, without a reload', async ({ page }) => {
  await user('rosa', 'viewer');
  const { failed } = await jobs();
  // The page's clock, to move a minute on without waiting one (it runs as usual otherwise).
  await page.clock.install();
  await page.goto(`/jobs/${failed}`);
  await signIn(page, 'rosa');
  await expect(page.getByTestId('signed-in-as')).toContainText('rosa · viewer');
  await refused(page.getByRole('button', { name: 'Requeue', exact: true }), /Viewers cannot requeue/);
  // An admin promotes rosa meanwhile: nothing is refused to tell the page, so it reads the role again itself.
  await db().query(`UPDATE users SET role = 'operator' WHERE name = 'rosa'`);
  await page.clock.fastForward('01:05');
  await expect(page.getByTestId('signed-in-as')).toContainText('rosa · operator');
  await expect(page.getByRole('button', { name: 'Requeue', exact: true })).toBeEnabled();
});

test("signed in, on a phone (390 px): the header's controls wrap, and no page scrolls sideways", async ({ page }) => {
  await user('phoebe.longname', 'operator');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/');
  await signIn(page, 'phoebe.longname');
  await expect(page.getByTestId('signed-in-as')).toContainText('phoebe.longname · operator');
  for (const path of ['/', '/jobs', '/dead-letter', '/workers', '/schedules', '/audit']) {
    await page.goto(path);
    await expect(page.getByTestId('refresh-control')).toBeVisible();
    await expect
      .poll(() => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), { message: `sideways scroll on ${path}` })
      .toBeLessThanOrEqual(0);
  }
});
