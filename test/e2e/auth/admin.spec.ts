/** /admin with sign-in on: an admin adds a user, changes its role, creates and revokes a token; the audit page shows each. */
import { expect, test } from '../test';
import { hashPassword } from '../../../lib/auth/passwords';
import { closeDb, db } from '../helpers';

test.afterAll(closeDb);

test('an admin manages users and tokens from the console', async ({ page }) => {
  await db().query(
    `INSERT INTO users (name, role, password_hash) VALUES ('adele', 'admin', $1)
     ON CONFLICT (name) DO UPDATE SET role = 'admin', password_hash = EXCLUDED.password_hash, disabled_at = NULL`,
    [await hashPassword('adele-password-123')],
  );
  await page.goto('/admin');
  await page.getByLabel('Name').fill('adele');
  await page.getByLabel('Password').fill('adele-password-123');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/admin$/);
  await expect(page.getByRole('link', { name: 'Admin' })).toBeVisible();

  const name = `e2e-user-${Date.now()}`;
  await page.getByLabel('New user name').fill(name);
  await page.getByLabel('New user role').selectOption('operator');
  await page.getByLabel('New user password').fill('e2e-user-password');
  await page.getByRole('button', { name: 'Add user' }).click();
  await expect(page.getByTestId('user-table')).toContainText(name);

  const tokenName = `e2e-token-${Date.now()}`;
  await page.getByLabel('New token name').fill(tokenName);
  await page.getByRole('button', { name: 'Create token' }).click();
  await expect(page.getByTestId('new-token')).toContainText('lh_');
  const secret = (await page.getByTestId('new-token').locator('code').textContent())!;
  expect((await page.request.post('/api/jobs', { data: { type: 'demo.noop' }, headers: { authorization: `Bearer ${secret}` } })).status()).toBe(202);
  const row = page.getByTestId('token-table').getByRole('row').filter({ hasText: tokenName });
  await row.getByRole('button', { name: /^Revoke token/ }).click();
  // Asked first, with what the token is: dismissed, nothing is revoked.
  const confirm = page.getByTestId('admin-confirm');
  await expect(confirm).toContainText(tokenName);
  await confirm.getByRole('button', { name: 'Keep it' }).click();
  await expect(confirm).toHaveCount(0);
  expect((await page.request.post('/api/jobs', { data: { type: 'demo.noop' }, headers: { authorization: `Bearer ${secret}` } })).status()).toBe(202);
  await row.getByRole('button', { name: /^Revoke token/ }).click();
  await confirm.getByLabel('Reason').fill(`leaked ${tokenName}`);
  await confirm.getByRole('button', { name: 'Revoke token' }).click();
  await expect(row).toContainText('revoked');
  expect((await page.request.post('/api/jobs', { data: { type: 'demo.noop' }, headers: { authorization: `Bearer ${secret}` } })).status()).toBe(401);

  // A role changes after a confirmation that names the change; dismissed, nothing changes.
  const roleOf = async (n: string) => (await db().query('SELECT role FROM users WHERE name = $1', [n])).rows[0].role;
  const roleSelect = page.getByLabel(`Role of ${name}`);
  await expect(roleSelect).toHaveValue('operator');
  await roleSelect.selectOption('admin');
  await expect(confirm).toContainText(`${name}: operator → admin`);
  await confirm.getByRole('button', { name: 'Keep it' }).click();
  await expect(confirm).toHaveCount(0);
  await expect(roleSelect).toHaveValue('operator');
  expect(await roleOf(name)).toBe('operator');
  await roleSelect.selectOption('viewer');
  await expect(confirm).toContainText(`${name}: operator → viewer`);
  await confirm.getByLabel('Reason').fill(`read-only now ${name}`);
  await confirm.getByRole('button', { name: `Make ${name} viewer` }).click();
  await expect(roleSelect).toHaveValue('viewer');
  expect(await roleOf(name)).toBe('viewer');

  // Disabling a user says which of their tokens end with them, before it is done: one they
  // made while an admin (its label says "(user)", the CLI's "user@host": what counts is the maker).
  const kept = await db().query(
    `INSERT INTO api_tokens (name, token_hash, scope, created_by, created_by_user_id)
     SELECT $1, md5(random()::text), 'viewer', name || ' (user)', user_id FROM users WHERE name = $2 RETURNING token_id`,
    [`${name}-reader`, name],
  );
  await page.reload();
  const userRow = page.getByTestId('user-table').getByRole('row').filter({ hasText: name });
  await userRow.getByRole('button', { name: `Disable ${name}` }).click();
  await expect(confirm).toContainText('signed out everywhere');
  await expect(confirm).toContainText(`The 1 live API token they made is revoked with them`);
  await expect(confirm).toContainText(`${kept.rows[0].token_id} (${name}-reader, viewer)`);
  await confirm.getByLabel('Reason').fill(`left the team ${name}`);
  await confirm.getByRole('button', { name: `Disable ${name}` }).click();
  await expect(userRow).toContainText('disabled');

  await page.goto('/audit?actor=adele');
  const audit = page.getByTestId('audit-table');
  await expect(audit).toContainText('user.add');
  await expect(audit).toContainText('token.create');
  await expect(audit).toContainText('token.revoke');
  await expect(audit).toContainText('user.disable');
  await expect(audit).toContainText('user.set');
  // Each confirm's reason is the entry's.
  await expect(audit).toContainText(`leaked ${tokenName}`);
  await expect(audit).toContainText(`read-only now ${name}`);
  await expect(audit).toContainText(`left the team ${name}`);
});
