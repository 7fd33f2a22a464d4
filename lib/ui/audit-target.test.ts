/** What an audit entry applied to, in words an operator reads: a bulk action's filter as conditions, not JSON. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filterConditions, targetText } from './audit-target';

test("a bulk action's filter reads as its conditions, in the jobs list's order", () => {
  const conds = filterConditions({ queue: 'emails', status: 'failed', fingerprint: '3fa2b1c0d9e8' });
  assert.deepEqual(conds, [
    { label: 'status', op: '=', value: 'failed' },
    { label: 'queue', op: '=', value: 'emails' },
    { label: 'error group', op: '=', value: '3fa2b1c0d9e8' },
  ]);
  assert.equal(targetText({ filter: { queue: 'emails', status: 'failed', fingerprint: '3fa2b1c0d9e8' }, maxId: '812' }), 'jobs where status = failed, queue = emails, error group = 3fa2b1c0d9e8, job id ≤ 812');
});

test('text searches say "contains"; the pins and the CLI limit are named; unknown keys stay readable', () => {
  assert.equal(
    targetText({ filter: { error: 'timeout', payload: 'order.id=7', due: 'later', worker: 'w-1' }, limit: 500 }),
    'jobs where worker = w-1, error contains timeout, payload has order.id=7, due = later, at most 500',
  );
  assert.equal(targetText({ filter: { status: 'failed', maxId: '9' } }), 'jobs where status = failed, job id ≤ 9');
  assert.equal(targetText({ filter: { status: 'failed', finishedBy: '1767225600000000' } }), 'jobs where status = failed, finished by 2026-01-01T00:00:00.000Z');
  assert.equal(targetText({ filter: { shape: { a: 1 } } }), 'jobs where shape = {"a":1}');
  assert.equal(targetText({ filter: {} }), 'every job (no condition)');
});

test('user text is kept as it was written (the component escapes it), never interpreted', () => {
  const hostile = '<img src=x onerror=alert(1)>';
  const [c] = filterConditions({ queue: hostile });
  assert.equal(c!.value, hostile);
  assert.equal(targetText({ filter: { queue: hostile } }), `jobs where queue = ${hostile}`);
});

test('the other targets: ids, the sweep, a queue, a user, a token, a schedule, a saved view', () => {
  assert.equal(targetText({ ids: ['5'] }), 'job #5');
  assert.equal(targetText({ ids: ['5', '6'] }), '2 jobs');
  assert.equal(targetText({ all: true }), 'the whole sweep');
  assert.equal(targetText({ queue: 'mail' }), 'queue mail');
  assert.equal(targetText({ user: 'bob' }), 'user bob');
  assert.equal(targetText({ token: '4', name: 'billing' }), 'token 4 (billing)');
  assert.equal(targetText({ schedule: 'nightly' }), 'schedule nightly');
  assert.equal(targetText({ worker: 'vm:9233:6192a7' }), 'worker vm:9233:6192a7', 'a quiet or resume names the worker, not its JSON');
  assert.equal(targetText({ view: 'Failed payments', page: 'dead-letter', id: '3' }), 'view Failed payments on /dead-letter');
  assert.equal(targetText({ id: '3' }), '{"id":"3"}', 'a view delete refused before it knew the view leaves no entry; its raw target otherwise');
  assert.equal(targetText({ other: 1 }), '{"other":1}');
});

test('time filters read as their window', () => {
  assert.deepEqual(filterConditions({ status: 'failed', finishedSince: '1h' }), [
    { label: 'status', op: '=', value: 'failed' },
    { label: 'finished', op: '', value: 'in the last hour' },
  ]);
  assert.deepEqual(filterConditions({ createdSince: '2026-12-03T13:00:00Z' }), [{ label: 'enqueued', op: '', value: 'since 2026-12-03 13:00 UTC' }]);
});
