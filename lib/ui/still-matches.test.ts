import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobRow } from '../api/types';
import { stillMatches } from './still-matches';

const readAt = Date.parse('2026-01-31T12:00:00.000Z');
const job = (over: Partial<JobRow>) => ({ id: '7', queue: 'mail', type: 'demo.noop', status: 'queued', workerId: null, priority: 0, attemptCount: 0, runAt: '2026-01-31T11:59:00.000Z', ...over }) as JobRow;

test("a dead worker's jobs taken over since (their row names the new worker) still belong to its list; on its running list they do not", () => {
  const takenOver = job({ status: 'running', workerId: 'h:2:new' });
  assert.equal(stillMatches({ worker: 'h:1:dead' }, takenOver, readAt), true);
  assert.equal(stillMatches({ worker: 'h:1:dead', status: 'retrying' }, job({ status: 'retrying', workerId: 'h:1:dead' }), readAt), true);
  assert.equal(stillMatches({ worker: 'h:1:dead', status: 'running' }, takenOver, readAt), false);
  assert.equal(stillMatches({ worker: 'h:2:new', status: 'running' }, takenOver, readAt), true);
});

test('due now: a job claimed since, or one whose retry was pushed later, no longer matches; due later: one that came due', () => {
  assert.equal(stillMatches({ due: 'now' }, job({}), readAt), true);
  assert.equal(stillMatches({ due: 'now' }, job({ status: 'running', workerId: 'w' }), readAt), false);
  assert.equal(stillMatches({ due: 'now' }, job({ status: 'retrying', runAt: '2026-01-31T12:05:00.000Z' }), readAt), false);
  assert.equal(stillMatches({ due: 'later' }, job({ runAt: '2026-01-31T12:05:00.000Z' }), readAt), true);
  assert.equal(stillMatches({ due: 'later' }, job({ runAt: '2026-01-31T12:00:00.000Z' }), readAt), false, 'due at the read itself is due now');
});

test('status, queue, type, priority and attempts are checked; what the row cannot tell (error, payload) is taken as matching', () => {
  assert.equal(stillMatches({ status: 'queued', queue: 'mail', type: 'demo.noop' }, job({}), readAt), true);
  assert.equal(stillMatches({ status: 'failed' }, job({}), readAt), false);
  assert.equal(stillMatches({ queue: 'other' }, job({}), readAt), false);
  assert.equal(stillMatches({ priority: '3' }, job({ priority: 3 }), readAt), true);
  assert.equal(stillMatches({ priority: '3' }, job({}), readAt), false);
  assert.equal(stillMatches({ minAttempts: '2' }, job({ attemptCount: 1 }), readAt), false);
  assert.equal(stillMatches({ error: 'timeout', payload: 'user=1' }, job({}), readAt), true);
});
