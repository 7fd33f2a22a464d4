/**
 * Changing a user's role (userSetRole): the console keeps an admin, a signed-in user's
 * next request carries the new role, and a demoted user keeps no rights above it through
 * the API tokens they made.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testDatabase } from '../../test/db';
import { QueueError } from '../queue/errors';
import { sessionCreate, sessionPrincipal, tokenCreate, tokenPrincipal, userAdd, userDisable, userSetRole } from './store';

const db = await testDatabase();

let n = 0;
async function user(role: string) {
  const name = `u${++n}-${role}`;
  const u = await userAdd(db.pool, { name, role, password: `${name}-password` });
  return { ...u, session: (await sessionCreate(db.pool, u.id)).id };
}
const roleOf = async (name: string) => (await db.pool.query('SELECT role FROM users WHERE name = $1', [name])).rows[0].role as string;
/** Only the users this test made are admins: the guard counts every active admin in the table. */
const onlyThese = async (...names: string[]) => db.pool.query(`UPDATE users SET disabled_at = now() WHERE disabled_at IS NULL AND NOT (name = ANY($1))`, [names]);

describe('userSetRole', () => {
  test("a signed-in user's live session has the new role on its next request", async () => {
    const bob = await user('viewer');
    assert.equal((await sessionPrincipal(db.pool, bob.session))?.role, 'viewer');
    const r = await userSetRole(db.pool, bob.name, 'operator');
    assert.deepEqual([r.from, r.user.role, r.revokedTokens], ['viewer', 'operator', []]);
    assert.equal((await sessionPrincipal(db.pool, bob.session))?.role, 'operator', 'the same session, promoted');
    await userSetRole(db.pool, bob.name, 'viewer');
    assert.equal((await sessionPrincipal(db.pool, bob.session))?.role, 'viewer', 'and demoted: no sign-in again needed either way');
  });

  test('the last active admin cannot be demoted (409, nothing changes); with another admin it can', async () => {
    const ann = await user('admin');
    await onlyThese(ann.name);
    await assert.rejects(userSetRole(db.pool, ann.name, 'operator'), (e: unknown) => {
      assert.ok(e instanceof QueueError);
      assert.equal(e.code, 'state_forbids');
      assert.equal(e.httpStatus, 409);
      assert.match(e.message, /last active admin/);
      return true;
    });
    assert.equal(await roleOf(ann.name), 'admin');
    assert.equal((await sessionPrincipal(db.pool, ann.session))?.role, 'admin');

    // A disabled admin is no admin: it does not count as the other one.
    const gone = await user('admin');
    assert.ok(await userDisable(db.pool, gone.name));
    await assert.rejects(userSetRole(db.pool, ann.name, 'viewer'), /last active admin/);

    const ben = await user('admin');
    const r = await userSetRole(db.pool, ann.name, 'viewer');
    assert.deepEqual([r.from, r.user.role], ['admin', 'viewer']);
    await assert.rejects(userSetRole(db.pool, ben.name, 'operator'), /last active admin/, 'and now ben is the last');
  });

  test('two admins demoting each other at once: one wins, an admin remains', async () => {
    const a = await user('admin');
    const b = await user('admin');
    await onlyThese(a.name, b.name);
    const results = await Promise.allSettled([userSetRole(db.pool, a.name, 'operator'), userSetRole(db.pool, b.name, 'operator')]);
    assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM users WHERE role = 'admin' AND disabled_at IS NULL`);
    assert.equal(rows[0].n, 1);
  });

  test('demoted: the tokens they made with a scope above the new role are revoked; the rest stay', async () => {
    const cat = await user('admin');
    await user('admin'); // not the last admin
    const made = async (scope: string) => (await tokenCreate(db.pool, { name: `cat-${scope}`, scope, createdBy: cat.name, maker: { userId: cat.id } })).token;
    const [asAdmin, asOperator, asEnqueue, asViewer] = [await made('admin'), await made('operator'), await made('enqueue'), await made('viewer')];
    let r = await userSetRole(db.pool, cat.name, 'operator');
    assert.equal(r.revokedTokens.length, 1);
    assert.equal(await tokenPrincipal(db.pool, asAdmin), null, 'an admin token is above an operator');
    assert.ok(await tokenPrincipal(db.pool, asOperator));
    r = await userSetRole(db.pool, cat.name, 'viewer');
    assert.equal(r.revokedTokens.length, 2, 'operator and enqueue: a viewer may do neither');
    assert.equal(await tokenPrincipal(db.pool, asOperator), null);
    assert.equal(await tokenPrincipal(db.pool, asEnqueue), null);
    assert.equal((await tokenPrincipal(db.pool, asViewer))?.role, 'viewer');
  });

  test('replaced with a lesser role (user add --replace): the same tokens are revoked, as with user set', async () => {
    const dee = await user('admin');
    await user('admin'); // not the last admin
    const made = async (scope: string) => (await tokenCreate(db.pool, { name: `dee-${scope}`, scope, createdBy: dee.name, maker: { userId: dee.id } })).token;
    const [asAdmin, asOperator, asViewer] = [await made('admin'), await made('operator'), await made('viewer')];
    const same = await userAdd(db.pool, { name: dee.name, role: 'admin', password: 'dee-password-1', replace: true });
    assert.deepEqual(same.revokedTokens, [], 'the same role: a new password only');
    const r = await userAdd(db.pool, { name: dee.name, role: 'viewer', password: 'dee-password-2', replace: true });
    assert.equal(r.role, 'viewer');
    assert.equal(r.revokedTokens.length, 2, 'admin and operator: a viewer may do neither');
    assert.equal(await tokenPrincipal(db.pool, asAdmin), null);
    assert.equal(await tokenPrincipal(db.pool, asOperator), null);
    assert.equal((await tokenPrincipal(db.pool, asViewer))?.role, 'viewer');
  });

  test('a token asked for by an admin demoted (or disabled) since the request began is refused; the demotion and the making take turns', async () => {
    const eve = await user('admin');
    await user('admin'); // not the last admin
    await userSetRole(db.pool, eve.name, 'operator');
    await assert.rejects(
      tokenCreate(db.pool, { name: 'eve-late', scope: 'admin', createdBy: eve.name, maker: { userId: eve.id } }),
      (e: unknown) => e instanceof QueueError && e.code === 'forbidden' && /now operator/.test(e.message),
    );
    // At once: whichever goes first, no admin token of eve's outlives her demotion.
    await userSetRole(db.pool, eve.name, 'admin');
    const [made] = await Promise.allSettled([
      tokenCreate(db.pool, { name: 'eve-race', scope: 'admin', createdBy: eve.name, maker: { userId: eve.id } }),
      userSetRole(db.pool, eve.name, 'viewer'),
    ]);
    if (made.status === 'fulfilled') assert.equal(await tokenPrincipal(db.pool, made.value.token), null, 'made first: the demotion revoked it');
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM api_tokens WHERE created_by_user_id = $1 AND revoked_at IS NULL AND scope = 'admin'`, [eve.id]);
    assert.equal(rows[0].n, 0);
  });

  test('refused: an unknown role (400), a user who does not exist or is disabled (404); the same role changes nothing', async () => {
    const dan = await user('operator');
    await assert.rejects(userSetRole(db.pool, dan.name, 'root'), (e: unknown) => e instanceof QueueError && e.code === 'invalid_request');
    await assert.rejects(userSetRole(db.pool, 'nobody-here', 'viewer'), (e: unknown) => e instanceof QueueError && e.code === 'not_found');
    const gone = await user('viewer');
    await userDisable(db.pool, gone.name);
    await assert.rejects(userSetRole(db.pool, gone.name, 'admin'), (e: unknown) => e instanceof QueueError && e.code === 'not_found');
    const same = await userSetRole(db.pool, dan.name, 'operator');
    assert.deepEqual([same.from, same.user.role, same.changed], ['operator', 'operator', false]);
  });
});

describe('the last active admin, by the other ways', () => {
  test('cannot be disabled, nor replaced (user add --replace) with a lesser role; with another admin, can', async () => {
    const cy = await user('admin');
    await onlyThese(cy.name);
    await assert.rejects(userDisable(db.pool, cy.name), /last active admin/);
    await assert.rejects(userAdd(db.pool, { name: cy.name, role: 'operator', password: 'new-password-1', replace: true }), /last active admin/);
    assert.equal(await roleOf(cy.name), 'admin');
    assert.equal((await sessionPrincipal(db.pool, cy.session))?.role, 'admin', 'nothing changed: not even the session ended');
    // As admin again, a replace goes through (a new password for the one admin).
    assert.equal((await userAdd(db.pool, { name: cy.name, role: 'admin', password: 'new-password-2', replace: true })).role, 'admin');

    const dee = await user('admin');
    assert.ok(await userDisable(db.pool, cy.name), 'another admin is active');
    await assert.rejects(userDisable(db.pool, dee.name), /last active admin/, 'and now dee is the last');
  });

  test('two admins disabling each other at once: one wins, an admin remains', async () => {
    const e1 = await user('admin');
    const e2 = await user('admin');
    await onlyThese(e1.name, e2.name);
    const results = await Promise.allSettled([userDisable(db.pool, e2.name), userDisable(db.pool, e1.name)]);
    assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM users WHERE role = 'admin' AND disabled_at IS NULL`);
    assert.equal(rows[0].n, 1);
  });
});
