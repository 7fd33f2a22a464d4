/** An audit entry says the options its action ran with, not only its name. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditOptions } from './audit-table';

test('requeue with reset attempts, a revoke, a recover that rang wake-ups; none for plain actions', () => {
  assert.equal(auditOptions({ details: { resetAttempts: true, revokeLease: false } }), 'reset attempts');
  assert.equal(auditOptions({ details: { resetAttempts: true, revokeLease: true } }), 'reset attempts · revoked live leases');
  assert.equal(auditOptions({ details: { resignalled: 3 } }), 'rang 3 missing wake-ups');
  assert.equal(auditOptions({ details: { resignalled: 1 } }), 'rang 1 missing wake-up');
  assert.equal(auditOptions({ details: { total: 4 } }), null);
});
