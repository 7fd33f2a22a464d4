/** The lease badge's state: a lease end the console did not see is not reported as expired. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { heartbeatLate, LeaseCountdown, leaseState } from './lease';
import type { Sweep } from '@/lib/ui/sweep';

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

test('late is judged by the renewal interval the console is configured with, when its lease is the job\'s', () => {
  // lease 30 s, renewals every 20 s (LEASEHOLD_HEARTBEAT_MS=20000): 16 s without one is on time
  const every = (heartbeatMs: number) => ({ leaseMs: 30_000, heartbeatMs });
  assert.equal(heartbeatLate(job({ readAt: '2026-12-01T10:00:16.000Z' }), at('2026-12-01T10:00:16.500Z'), every(20_000)), false);
  assert.equal(heartbeatLate(job({ readAt: '2026-12-01T10:00:29.000Z' }), at('2026-12-01T10:00:29.500Z'), every(20_000)), false, 'not before 30 s: the expired badge says the rest');
  // renewals every 2 s: 4 s without one is late
  assert.equal(heartbeatLate(job({ readAt: '2026-12-01T10:00:04.000Z' }), at('2026-12-01T10:00:04.500Z'), every(2_000)), true);
  // renewals every second: a renewal a little late (1.8 s) is jitter, not yet late
  assert.equal(heartbeatLate(job({ readAt: '2026-12-01T10:00:01.800Z' }), at('2026-12-01T10:00:02.000Z'), every(1_000)), false);
});

test("a job whose lease is not the console's was renewed by workers with other settings: judged by a third of its own lease", () => {
  // The console renews every 2 s of a 6 s lease; this job's worker took a 30 s lease (every 10 s by default).
  const cadence = { leaseMs: 6_000, heartbeatMs: 2_000 };
  assert.equal(heartbeatLate(job({ readAt: '2026-12-01T10:00:08.000Z' }), at('2026-12-01T10:00:08.500Z'), cadence), false, 'not late by the console\'s 2 s');
  assert.equal(heartbeatLate(job({ readAt: '2026-12-01T10:00:16.000Z' }), at('2026-12-01T10:00:16.500Z'), cadence), true);
});

test('an expired lease says who moves it on: the sweep, or nobody while no worker is alive or their sweep has stopped', () => {
  const expired = { job: job({ readAt: '2026-12-01T10:00:31.000Z' }), nowMs: at('2026-12-01T10:00:32.000Z') };
  const html = (sweep?: Sweep) => renderToStaticMarkup(createElement(LeaseCountdown, { ...expired, sweep }));
  assert.match(html(), /expired — will be recovered/);
  assert.match(html({ state: 'sweeping' }), /expired — will be recovered/);
  assert.match(html({ state: 'no-workers' }), /expired — no live worker to recover it/);
  assert.match(html({ state: 'stopped', agoMs: 11 * 60_000 }), /expired — no recover sweep for 11 min/);
  // A lease still running is not blamed on the sweep.
  const running = { job: job({ readAt: '2026-12-01T10:00:10.000Z' }), nowMs: at('2026-12-01T10:00:10.000Z') };
  assert.doesNotMatch(renderToStaticMarkup(createElement(LeaseCountdown, { ...running, sweep: { state: 'stopped', agoMs: 11 * 60_000 } })), /expired|sweep/);
});
