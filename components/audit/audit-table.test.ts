/** An audit entry says the options its action ran with, not only its name. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditOptions, jobCountText } from './audit-table';

test('requeue with reset attempts, a revoke, a recover that rang wake-ups; none for plain actions', () => {
  assert.equal(auditOptions({ details: { resetAttempts: true, revokeLease: false } }), 'reset attempts');
  assert.equal(auditOptions({ details: { resetAttempts: true, revokeLease: true } }), 'reset attempts · revoked live leases');
  assert.equal(auditOptions({ details: { resignalled: 3 } }), 'rang 3 missing wake-ups');
  assert.equal(auditOptions({ details: { resignalled: 1 } }), 'rang 1 missing wake-up');
  assert.equal(auditOptions({ details: { total: 4 } }), null);
});

test("what a schedule's definition, a queue's limits and a reschedule set, on the entry's row", () => {
  assert.equal(
    auditOptions({ action: 'schedule.add', details: { cron: '0 3 * * *', timezone: 'Europe/Berlin', type: 'report.build', queue: 'reports', priority: 0, overlap: 'skip', created: false } }),
    'redefined · cron 0 3 * * * (Europe/Berlin) · report.build on reports · one run at a time',
  );
  assert.equal(auditOptions({ action: 'queue.limits', details: { concurrencyLimit: 2 } }), 'concurrency limit 2');
  assert.equal(auditOptions({ action: 'queue.limits', details: { rateLimit: 10, ratePeriodMs: 1000, concurrencyLimit: 0 } }), 'concurrency limit cleared · rate limit 10 per 1000 ms');
  assert.equal(auditOptions({ action: 'reschedule', details: { runAt: '2026-12-24T08:00:00.000Z', priority: 2 } }), 'due 2026-12-24 08:00:00 UTC · priority 2');
  assert.equal(auditOptions({ action: 'reschedule', details: { runAt: null, priority: 7 } }), 'priority 7');
});

test("a run-now's entry is not read as a definition; a definition's names show their invisible characters as escapes", () => {
  assert.equal(auditOptions({ action: 'schedule.run', details: { created: false } }), null);
  assert.equal(auditOptions({ action: 'schedule.add', details: { type: 'x\u202Eliam', queue: 'q', created: true } }), 'new · x\\u202eliam on q');
});

test("a redefinition says what it changed from", () => {
  assert.equal(
    auditOptions({ action: 'schedule.add', details: { cron: '0 4 * * *', timezone: 'UTC', type: 'demo.noop', queue: 'reports', created: false, changedFrom: { cron: '0 3 * * *', queue: 'reprots' } } }),
    'redefined · cron 0 4 * * * (UTC) · demo.noop on reports · was: cron 0 3 * * *, queue reprots',
  );
  assert.equal(
    auditOptions({ action: 'schedule.add', details: { cron: '0 4 * * *', type: 'demo.noop', queue: 'reports', created: false, payloadChanged: true } }),
    'redefined · cron 0 4 * * * · demo.noop on reports · payload changed',
  );
});

test('an entry over many jobs says how many in all, and how many find it on their pages when it keeps fewer ids', () => {
  const ids = Array.from({ length: 50 }, (_, k) => String(k + 1));
  assert.equal(jobCountText({ jobIds: ids.slice(0, 3), details: { jobCount: 3 } }, 10), null);
  assert.equal(jobCountText({ jobIds: ids, details: { jobCount: 1500 } }, 10), '… (1,500 jobs)');
  assert.equal(jobCountText({ jobIds: ids, details: { jobCount: 25_000, jobIdsKept: 10_000 } }, 10), '… (25,000 jobs; the first 10,000 show it on their pages)');
});
