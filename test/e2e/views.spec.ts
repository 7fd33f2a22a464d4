import { expect, test } from './test';
import { closeDb, db, enqueue, waitForStatus } from './helpers';

test.afterAll(closeDb);

test('a saved view: save the applied filters under a name, open it from the menu elsewhere, delete it', async ({ page, request }) => {
  const tag = `e2e-views-${process.pid}`;
  // Names are user text: this one must show as written, not as markup.
  const name = `Done in <b>${tag}</b>`;
  const done = await enqueue(request, { type: 'demo.noop', queue: 'default', payload: { view: tag } });
  await waitForStatus(done, 'completed');
  const other = await enqueue(request, { type: 'demo.noop', queue: 'default', payload: { view: 'other' } });
  await waitForStatus(other, 'completed');
  const filtered = `status=completed&queue=default&payload=view%3D${tag}`;
  try {
    await page.goto('/jobs');
    await page.getByLabel('Status').selectOption('completed');
    await expect(page).toHaveURL(/\/jobs\?status=completed$/); // a status applies at once
    await page.getByLabel('Queue').fill('default');
    await page.getByLabel('Payload').fill(`view=${tag}`);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect(page).toHaveURL(new RegExp(`/jobs\\?${filtered}$`));

    const views = page.getByTestId('saved-views');
    await views.getByRole('button', { name: /^Views/ }).click();
    await page.getByRole('button', { name: 'Save current filters…' }).click();
    const dialog = page.getByTestId('save-view-dialog');
    await expect(dialog.getByTestId('view-conditions')).toContainText(`payload has view=${tag}`);
    await expect(dialog.getByLabel('Name')).toBeFocused();
    await dialog.getByLabel('Name').fill(name);
    await dialog.getByRole('button', { name: 'Save view' }).click();
    await expect(dialog).toHaveCount(0);
    // The applied filters are the view's: it is marked at once.
    await expect(views.getByTestId('active-view')).toHaveText(`: ${name}`);
    const { rows } = await db().query(`SELECT query, created_by FROM saved_views WHERE name = $1`, [name]);
    expect(rows).toEqual([{ query: filtered, created_by: null }]);

    // Elsewhere (the whole list), the view brings the filters back.
    await page.goto('/jobs');
    await expect(page.getByTestId(`job-row-${other}`)).toBeVisible();
    await expect(views.getByTestId('active-view')).toHaveCount(0);
    await views.getByRole('button', { name: /^Views/ }).click();
    const menu = page.getByTestId('saved-views-menu');
    const link = menu.getByRole('link', { name: new RegExp(name.replace(/[<>/]/g, '.')) });
    await expect(link).toContainText(name);
    await expect(menu.locator('b')).toHaveCount(0);
    await link.click();
    await expect(page).toHaveURL(new RegExp(`/jobs\\?${filtered}$`));
    await expect(page.getByLabel('Status')).toHaveValue('completed');
    await expect(page.getByLabel('Payload')).toHaveValue(`view=${tag}`);
    await expect(page.getByTestId(`job-row-${done}`)).toBeVisible();
    await expect(page.getByTestId(`job-row-${other}`)).toHaveCount(0);
    await views.getByRole('button', { name: /^Views/ }).click();
    await expect(menu.getByRole('link', { name: new RegExp(name.replace(/[<>/]/g, '.')) })).toHaveAttribute('aria-current', 'page');

    // Deleting asks first, then the view is gone from the menu and the table.
    await menu.getByRole('button', { name: `Delete view ${name}` }).click();
    const confirm = page.getByTestId('delete-view-dialog');
    await expect(confirm).toContainText(name);
    // The why goes to the audit log, as every action's reason does.
    const [{ id }] = (await db().query(`SELECT view_id::text AS id FROM saved_views WHERE name = $1`, [name])).rows;
    await confirm.getByLabel('Reason').fill(`old view ${tag}`);
    await confirm.getByRole('button', { name: 'Delete view' }).click();
    await expect(confirm).toHaveCount(0);
    const audit = await db().query(`SELECT reason FROM audit_log WHERE action = 'view.delete' AND target->>'id' = $1`, [id]);
    expect(audit.rows).toEqual([{ reason: `old view ${tag}` }]);
    await expect(views.getByTestId('active-view')).toHaveCount(0);
    await views.getByRole('button', { name: /^Views/ }).click();
    await expect(menu.getByRole('link', { name: new RegExp(name.replace(/[<>/]/g, '.')) })).toHaveCount(0);
    expect((await db().query(`SELECT count(*)::int AS n FROM saved_views WHERE name = $1`, [name])).rows[0].n).toBe(0);
  } finally {
    await db().query(`DELETE FROM saved_views WHERE name = $1`, [name]);
  }
});
