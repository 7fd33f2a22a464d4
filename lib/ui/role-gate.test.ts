/** Why the signed-in role may not use a write button, in words an operator reads (or null: it may). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { roleNeeded, roleRefusal } from './role-gate';

test('viewers are told which role to ask; operators only for delete; admins never', () => {
  assert.equal(roleRefusal('requeue', 'viewer'), 'Viewers cannot requeue; ask an operator.');
  assert.equal(roleRefusal('pause', 'viewer'), 'Viewers cannot pause queues; ask an operator.');
  assert.equal(roleRefusal('delete', 'viewer'), 'Viewers cannot delete jobs; ask an admin.');
  assert.equal(roleRefusal('delete', 'operator'), 'Operators cannot delete jobs; ask an admin.');
  assert.equal(roleRefusal('view.save', 'viewer'), 'Viewers cannot save views; ask an operator.');
  for (const a of ['requeue', 'cancel', 'recover', 'pause', 'resume', 'enqueue', 'view.save'] as const) assert.equal(roleRefusal(a, 'operator'), null, a);
  for (const a of ['requeue', 'cancel', 'recover', 'delete', 'pause', 'resume', 'enqueue'] as const) assert.equal(roleRefusal(a, 'admin'), null, a);
});

test('a role not known yet (still loading, or sign-in off) disables nothing: the server decides', () => {
  assert.equal(roleRefusal('delete', null), null);
  assert.equal(roleRefusal('delete', undefined), null);
});

test('the roles needed are the server gate\'s: delete needs admin, every other action operator', () => {
  assert.equal(roleNeeded('delete'), 'admin');
  assert.equal(roleNeeded('requeue'), 'operator');
  assert.equal(roleNeeded('enqueue'), 'operator');
});
