/**
 * When the header stops saying "Live": the latest thing the page's watched queries heard is
 * a failure to reach the server (down, or failing with a 5xx), not a 404 or a refusal.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { RefreshControl } from '@/components/layout/refresh-control';
import { ApiError } from './client';
import { connectionTrouble, pollEvery } from './connection';

type Q = Parameters<typeof connectionTrouble>[0][number];
const q = (o: { data?: number; error?: Error; errorAt?: number; failures?: number; observers?: number; body?: unknown; fetching?: boolean }): Q =>
  ({
    getObserversCount: () => o.observers ?? 1,
    state: {
      fetchStatus: o.fetching ? 'fetching' : 'idle',
      data: o.body,
      dataUpdatedAt: o.data ?? 0,
      status: o.error && o.errorAt ? 'error' : 'success',
      error: o.errorAt ? (o.error ?? null) : null,
      errorUpdatedAt: o.errorAt ?? 0,
      fetchFailureCount: o.failures ?? (o.errorAt ? 1 : 0),
      fetchFailureReason: o.error ?? null,
    },
  }) as unknown as Q;

const down = new ApiError(0, 'network', 'the console server did not answer');

const NOW = 20_000;

test('the server not answering after the last answer, for 5 s, is trouble, with when it last answered', () => {
  assert.equal(connectionTrouble([q({ data: 1_000 }), q({ data: 2_000 })], NOW), null);
  assert.deepEqual(connectionTrouble([q({ data: 1_000 }), q({ data: 2_000, error: down, errorAt: 5_000 })], NOW), { lastAnswerAt: 2_000 });
  assert.deepEqual(connectionTrouble([q({ error: new ApiError(503, 'unavailable', 'db down'), errorAt: 5_000 })], NOW), { lastAnswerAt: null });
});

test('a blip is not trouble: an answer within 5 s, a failure its retry may still mend, one query failing beside others that answer', () => {
  assert.equal(connectionTrouble([q({ data: 16_000, error: down, errorAt: 17_000 })], NOW), null);
  assert.equal(connectionTrouble([q({ data: 1_000, error: down, failures: 1 })], NOW), null, 'still retrying');
  assert.equal(connectionTrouble([q({ data: 19_000 }), q({ data: 1_000, error: new ApiError(503, 'busy', 'timed out'), errorAt: 18_000 })], NOW), null);
});

test("a shared snapshot served during the outage (the stats) counts as an answer from when it was taken, not when it came", () => {
  // The jobs list failing since 5 s; the stats answered at 14 s with a snapshot taken at 2 s
  // (its dbNow 12 s after its computedAt), which the server goes on serving while the database is away.
  const stats = { computedAt: '2026-12-05T10:00:00.000Z', dbNow: '2026-12-05T10:00:12.000Z', refreshFailing: true };
  assert.deepEqual(connectionTrouble([q({ data: 2_000, error: down, errorAt: 5_000 }), q({ data: 14_000, body: stats })], NOW), { lastAnswerAt: 2_000 });
  // A snapshot served old while its refresh runs (after a quiet spell) is an answer like any other.
  assert.equal(connectionTrouble([q({ data: 2_000, error: down, errorAt: 5_000 }), q({ data: 14_000, body: { ...stats, refreshFailing: false } })], NOW), null);
});

test('an answer after the failure, a 404 or a refusal, or a query no page watches is not trouble', () => {
  assert.equal(connectionTrouble([q({ error: down, errorAt: 5_000 }), q({ data: 6_000 })], NOW), null);
  assert.equal(connectionTrouble([q({ data: 1_000, error: new ApiError(404, 'not_found', 'no such job'), errorAt: 5_000 })], NOW), null);
  assert.equal(connectionTrouble([q({ data: 1_000, error: new ApiError(403, 'forbidden', 'no'), errorAt: 5_000 })], NOW), null);
  assert.equal(connectionTrouble([q({ data: 1_000 }), q({ error: down, errorAt: 5_000, observers: 0 })], NOW), null);
});

test('a poll that hangs (a server stopped, never failing a request) is trouble once nothing has replied for 15 s (or two intervals) and it has waited 5 s', () => {
  const NOW2 = 60_000;
  const started = new Map<Q, number>();
  const polls = new Map<Q, number>();
  const since = (x: Pick<Q, 'state'>) => started.get(x as Q);
  const every = (x: Pick<Q, 'state'>) => polls.get(x as Q);
  const poll = (data: number, startedAt: number, ms = 2_000) => {
    const x = q({ data, fetching: true });
    started.set(x, startedAt);
    polls.set(x, ms);
    return x;
  };
  const hung = poll(40_000, 44_000);
  assert.deepEqual(connectionTrouble([hung], NOW2, since, every), { lastAnswerAt: 40_000, hanging: true });
  assert.deepEqual(connectionTrouble([hung], 55_000, since, every), { lastAnswerAt: 40_000, hanging: true }, '15 s since the last reply');
  assert.equal(connectionTrouble([hung], 54_999, since, every), null, 'less than 15 s since the last reply');
  // A live stream that went quiet: its polls begin late, 9 s after its last event (lib/api/live.ts).
  const late = poll(40_000, 54_000);
  assert.equal(connectionTrouble([late], 58_999, since, every), null, 'the poll has waited less than 5 s: it may yet answer');
  assert.deepEqual(connectionTrouble([late], 59_000, since, every), { lastAnswerAt: 40_000, hanging: true });
  // Another query answering meanwhile (the live stream's pushes): the server follows; this poll is slow.
  assert.equal(connectionTrouble([hung, q({ data: 55_000 })], NOW2, since, every), null);
  // Another failing (the database away, the server up): "Refresh failing", not the server hanging.
  assert.deepEqual(connectionTrouble([hung, q({ data: 1_000, error: new ApiError(503, 'unavailable', 'db down'), errorAt: 50_000 })], NOW2, since, every), { lastAnswerAt: 40_000 });
  // A poll every 30 s may wait up to two of its intervals.
  assert.equal(connectionTrouble([poll(20_000, 20_500, 30_000)], NOW2, since, every), null);
  assert.deepEqual(connectionTrouble([poll(20_000, 20_500, 30_000)], 81_000, since, every), { lastAnswerAt: 20_000, hanging: true });
  // A one-off read (an action's preview), however slow, is not a poll.
  const preview = q({ data: 1_000, fetching: true });
  started.set(preview, 10_000);
  assert.equal(connectionTrouble([preview], NOW2, since, every), null);
  // Nothing under way (paused, or the stream answering without polls): no trouble, however old.
  assert.equal(connectionTrouble([q({ data: 2_000 })], NOW2, since, every), null);
});

test('the header says the refreshes are failing, and since when it last heard, instead of "Live"', () => {
  const render = (trouble: { lastAnswerAt: number | null; now: number; hanging?: boolean } | null, pausedReason: string | null = null) =>
    renderToStaticMarkup(
      createElement(RefreshControl, { intervalMs: 2000, intervals: [2000], pausedReason, userPaused: false, trouble, onInterval() {}, onPause() {}, onRefreshNow() {} }),
    );
  assert.match(render(null), /Live · every 2 s/);
  const html = render({ lastAnswerAt: 10_000, now: 55_000 });
  assert.match(html, /Refresh failing · last update 45 s ago/);
  assert.doesNotMatch(html, /Live/);
  assert.match(render({ lastAnswerAt: null, now: 55_000 }), /Refresh failing · last update never/);
  assert.match(render({ lastAnswerAt: 10_000, now: 55_000 }, 'paused'), /Refresh paused/);
  assert.match(render({ lastAnswerAt: 10_000, now: 55_000, hanging: true }), /Server not answering · last update 45 s ago/);
});

test('a query polls at its refetchInterval, a number or what a function of the query answers (the stats: statsRefetchMs)', () => {
  const withObservers = (...intervals: unknown[]) => ({ ...q({}), observers: intervals.map((refetchInterval) => ({ options: { refetchInterval } })) }) as unknown as Q;
  assert.equal(pollEvery(withObservers(15_000)), 15_000);
  assert.equal(pollEvery(withObservers(() => 15_000)), 15_000, 'a function counts: the stats poll is still watched for hanging');
  assert.equal(pollEvery(withObservers(() => false, 2_000)), 2_000);
  assert.equal(pollEvery(withObservers(false, () => false)), undefined, 'none polls');
});
