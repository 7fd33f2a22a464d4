/**
 * /audit: a bulk action's filter reads as its conditions (user text as text), with the
 * stored JSON one click away; the Action filter is a select of the known actions, and a
 * filter in the address (a link from chat, an action this console does not know) still applies.
 */
import { expect, test } from './test';
import { closeDb, db } from './helpers';

test.afterAll(closeDb);

test("a bulk action's filter shows as conditions; the Action filter is a select driven by the address", async ({ page }) => {
  const actor = `audit-e2e-${Date.now()}`;
  const hostileQueue = `q<img src=x onerror="window.__xss=1">`;
  const target = { filter: { status: 'failed', queue: hostileQueue, fingerprint: 'abcdef012345' }, maxId: '99' };
  await db().query(
    `INSERT INTO audit_log (actor, actor_kind, action, target, job_ids, changed, skipped, details, state)
     VALUES ($1, 'user', 'bulk.requeue', $2, '{}', 3, 1, '{}', 'done'), ($1, 'user', 'old.action', '{"queue":"legacy"}', '{}', 1, 0, '{}', 'done')`,
    [actor, JSON.stringify(target)],
  );
  let dialogs = 0;
  page.on('dialog', (d) => {
    dialogs++;
    void d.dismiss();
  });

  await page.goto(`/audit?actor=${actor}&action=bulk.requeue`);
  const action = page.getByLabel('Action');
  await expect(action).toHaveValue('bulk.requeue');
  const table = page.getByTestId('audit-table');
  await expect(table.getByRole('row')).toHaveCount(2); // the header and the one entry
  const chips = table.getByTestId('audit-filter-chip');
  await expect(chips).toHaveText(['status = failed', `queue = ${hostileQueue}`, 'error group = abcdef012345', 'job id ≤ 99']);
  expect(await page.locator('img[src="x"]').count()).toBe(0);
  // The stored JSON, folded away until asked for.
  const raw = table.getByTestId('audit-filter-json');
  await expect(raw).toBeHidden();
  await table.getByText('raw JSON').click();
  await expect(raw).toBeVisible();
  expect(JSON.parse((await raw.textContent())!)).toEqual(target);

  // Jobs given by id: named once, by their links.
  const { rows: [one] } = await db().query(
    `INSERT INTO audit_log (actor, actor_kind, action, target, job_ids, changed, skipped, details, state) VALUES ($1, 'user', 'requeue', '{"ids": ["4242"]}', '{4242}', 1, 0, '{}', 'done') RETURNING audit_id`,
    [actor],
  );
  await page.goto(`/audit?actor=${actor}&action=requeue`);
  const byId = page.getByTestId(`audit-${one.audit_id}`);
  await expect(byId.getByTestId('audit-ids')).toHaveText('job');
  await expect(byId.getByRole('link', { name: '#4242' })).toHaveAttribute('href', '/jobs/4242');
  await expect(byId).not.toContainText('job #4242');
  await page.goto(`/audit?actor=${actor}&action=bulk.requeue`);

  // The select lists the known actions (lib/audit/actions.ts), grouped, and filters through the address.
  const options = await action.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  expect(options).toEqual(expect.arrayContaining(['', 'requeue', 'bulk.requeue', 'queue.pause', 'user.set', 'token.revoke']));
  await action.selectOption('user.add');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page).toHaveURL(/action=user\.add/);
  await expect(page.getByText('No entries match these filters')).toBeVisible();

  // An action this console does not list, from the address: still the filter, and shown as chosen.
  await page.goto(`/audit?actor=${actor}&action=old.action`);
  await expect(page.getByLabel('Action')).toHaveValue('old.action');
  await expect(page.getByTestId('audit-table')).toContainText('queue legacy');
  expect(dialogs).toBe(0);
  expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss ?? 0)).toBe(0);
});

test('the job id filter takes an id as the console shows it (#4242), says so of one that is none, and names how many jobs a large entry touched', async ({ page }) => {
  const actor = `audit-e2e-id-${Date.now()}`;
  const ids = Array.from({ length: 12 }, (_, k) => String(4242 + k));
  // A bulk action over 25,000 jobs whose entry kept the first ids only (12 here, 10,000 in life).
  const { rows: [many] } = await db().query(
    `INSERT INTO audit_log (actor, actor_kind, action, target, job_ids, changed, skipped, details, state)
     VALUES ($1, 'user', 'bulk.cancel', '{"filter": {"queue": "big"}}', $2::bigint[], 25000, 0, '{"jobIdsTruncated": 25000}', 'done') RETURNING audit_id`,
    [actor, ids],
  );
  await page.goto(`/audit?actor=${actor}`);
  const entry = page.getByTestId(`audit-${many.audit_id}`);
  await expect(entry.getByTestId('audit-job-count')).toHaveText('… (25,000 jobs; the first 12 show it on their pages)');
  await expect(entry).toContainText('25,000');

  const jobId = page.getByLabel('Job id');
  await jobId.fill('#4242');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page).toHaveURL(/jobId=4242(&|$)/);
  await expect(page.getByTestId(`audit-${many.audit_id}`)).toBeVisible();
  // Not an id: said beside the box; the log stays as it was, and so does the address.
  await page.getByLabel('Job id').fill('abc');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page.getByTestId('audit-job-id-error')).toHaveText('A job id is a number, as in 4211 or #4211.');
  await expect(page).toHaveURL(/jobId=4242(&|$)/);
  await expect(page.getByTestId(`audit-${many.audit_id}`)).toBeVisible();
});
