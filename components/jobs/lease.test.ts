/** The lease badge's state: a lease end the console did not see is not reported as expired. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { heartbeatLate, LeaseCountdown, leaseState } from './lease';

const job = (over: Record<string, unknown> = {}) => ({
  status: 'running',
  workerId: 'w',
  leaseExpiresAt: '2026-12-01T10:00:30.000Z',
  heartbeatAt: '2026-12-01T10:00:00.000Z',
  attemptCount: 1,
  maxAttempts: 3,
  ...over,
});
const at = (iso: string) => Date.parse(iso);

test('time left before the lease end', () => {
  assert.equal(leaseState(job({ readAt: '2026-12-01T10:00:01.000Z' }), at('2026-12-01T10:00:10.000Z')), 'left');
});

test('past the end, read after it: expired', () => {
  assert.equal(leaseState(job({ readAt: '2026-12-01T10:00:31.000Z' }), at('2026-12-01T10:00:32.000Z')), 'expired');
});

test('past the end, but last read before it (refresh paused, or a row too far down to follow): unseen, not expired', () => {
  assert.equal(leaseState(job({ readAt: '2026-12-01T10:00:01.000Z' }), at('2026-12-01T10:00:40.000Z')), 'unseen');
});

test('no read time known: past the end is expired, as before', () => {
  assert.equal(leaseState(job(), at('2026-12-01T10:00:40.000Z')), 'expired');
});

test('not running, or no lease: nothing', () => {
  assert.equal(leaseState(job({ status: 'queued' }), at('2026-12-01T10:00:40.000Z')), null);
  assert.equal(leaseState(job({ leaseExpiresAt: null }), at('2026-12-01T10:00:40.000Z')), null);
});

test('renewals stopped: late once the row, as read, shows no renewal for more than half the lease', () => {
  // lease 30 s from the last renewal at 10:00:00; a healthy worker renews every 10 s
  assert.equal(heartbeatLate(job({ readAt: '2026-12-01T10:00:12.000Z' }), at('2026-12-01T10:00:12.500Z')), false, 'one renewal due, not yet late');
  assert.equal(heartbeatLate(job({ readAt: '2026-12-01T10:00:16.000Z' }), at('2026-12-01T10:00:16.500Z')), true);
  assert.equal(heartbeatLate(job({ readAt: '2026-12-01T10:00:05.000Z' }), at('2026-12-01T10:00:25.000Z')), false, 'a row not read again is not called late');
  assert.equal(heartbeatLate(job({ status: 'completed', readAt: '2026-12-01T10:00:20.000Z' }), at('2026-12-01T10:00:20.000Z')), false);
});

test('an expired lease says who moves it on: the sweep, or nobody while no worker is alive', () => {
  const expired = { job: job({ readAt: '2026-12-01T10:00:31.000Z' }), nowMs: at('2026-12-01T10:00:32.000Z') };
  assert.match(renderToStaticMarkup(createElement(LeaseCountdown, expired)), /expired — will be recovered/);
  assert.match(renderToStaticMarkup(createElement(LeaseCountdown, { ...expired, sweeping: false })), /expired — no live worker to recover it/);
});
