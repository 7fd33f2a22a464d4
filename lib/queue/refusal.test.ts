/** What an action's preview and answer say of a job it would skip, and why. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeRefusal } from './ops/actions';

const running = { status: 'running', workerId: 'vm:16344:1111f1', leaseRemainingMs: 22_000, cancelRequestedAt: null, ownerGone: null, singletonHolder: null } as unknown as Parameters<typeof describeRefusal>[1];

test('a running job cannot be deleted whatever its lease: the reason says to cancel it, not to wait', () => {
  assert.equal(describeRefusal('delete', running), 'still running on vm:16344:1111f1: cancel it first (only a finished job can be deleted)');
  assert.equal(describeRefusal('delete', { ...running, leaseRemainingMs: -5_000 }), 'still running on vm:16344:1111f1: cancel it first (only a finished job can be deleted)');
  // A requeue's reason stays the lease's: revoking it is the way.
  assert.match(describeRefusal('requeue', running), /^lease still held by vm:16344:1111f1 for 22 s \(revoke the lease to take it back\)$/);
});
