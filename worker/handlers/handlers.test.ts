import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobTypes } from '../../lib/job-types';
import { canTransition, TRANSITIONS } from '../../lib/queue/status';
import { handlers } from './index';

test('every accepted job type has a handler, and every handler an accepted type', () => {
  assert.deepEqual(Object.keys(handlers).sort(), Object.keys(jobTypes).sort());
});

test('demo.sleep fails its first failTimes attempts, then succeeds; it stops when aborted', async () => {
  const ctx = (attempt: number, signal = new AbortController().signal) =>
    ({ attempt, signal, job: { id: '1' } }) as Parameters<typeof handlers['demo.sleep']>[1];
  await assert.rejects(async () => handlers['demo.sleep']({ ms: 1, failTimes: 2 }, ctx(2)), /failing attempt 2/);
  assert.deepEqual(await handlers['demo.sleep']({ ms: 1, failTimes: 2 }, ctx(3)), { slept: 1, attempt: 3 });
  const ac = new AbortController();
  const p = handlers['demo.sleep']({ ms: 60_000 }, ctx(1, ac.signal));
  ac.abort();
  await assert.rejects(async () => p, /abort/i);
});

test('the transition table has no way out of a terminal state except an operator requeue', () => {
  for (const [from, , by] of TRANSITIONS) {
    if (['completed', 'failed', 'cancelled'].includes(from)) assert.equal(by, 'jobRequeue');
  }
  assert.equal(canTransition('completed', 'running'), false);
  assert.equal(canTransition('queued', 'running'), true);
});
