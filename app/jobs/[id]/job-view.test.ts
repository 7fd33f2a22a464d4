/**
 * The job page, rendered to markup (no browser) from the query cache as a refresh leaves
 * it: a job deleted since the page loaded (the refresh answers 404, the old data is still
 * held) shows as gone, not as the last state with its actions enabled.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { ApiError } from '@/lib/api/client';
import { jobDetailQuery } from '@/lib/api/jobs';
import type { JobDetailDto } from '@/lib/api/types';
import { RefreshProvider } from '@/lib/ui/refresh';
import { attemptsRaised, JobView } from './job-view';

const at = '2026-01-31T12:00:00.000Z';
const detail = (id: string): JobDetailDto => ({
  job: {
    id,
    queue: 'mail',
    type: 'demo.noop',
    status: 'completed',
    payload: {},
    attemptCount: 1,
    maxAttempts: 3,
    attemptBudget: 3,
    workerId: null,
    heartbeatAt: null,
    leaseExpiresAt: null,
    runAt: at,
    priority: 0,
    cancelRequestedAt: null,
    idempotencyKey: null,
    singletonKey: null,
    resultKey: null,
    error: null,
    checkpoints: null,
    leaseLostStreak: 0,
    createdAt: at,
    startedAt: at,
    finishedAt: at,
    leaseRemainingMs: null,
    ownerGone: null,
  },
  payloadText: '{}',
  attempts: [],
  dbNow: at,
});

/** The page for job `id` with the detail query in the given state. */
function render(id: string, state: { data?: JobDetailDto; error?: Error }) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const query = qc.getQueryCache().build<JobDetailDto>(qc, { queryKey: [...jobDetailQuery(id, false).queryKey] });
  query.setState({
    data: state.data,
    dataUpdatedAt: state.data ? Date.now() - 5_000 : 0,
    error: state.error ?? null,
    errorUpdatedAt: state.error ? Date.now() : 0,
    status: state.error ? 'error' : 'success',
    fetchStatus: 'idle',
  });
  return renderToStaticMarkup(createElement(QueryClientProvider, { client: qc }, createElement(RefreshProvider, null, createElement(JobView, { id }))));
}

const gone = (id: string) => new ApiError(404, 'not_found', `no job with id ${id}`);

test('a job that loaded shows with its actions', () => {
  const html = render('41', { data: detail('41') });
  assert.match(html, /Job <span class="font-mono">#41<\/span>/);
  assert.match(html, /<button[^>]*>Delete<\/button>/);
});

test('a job deleted since the page loaded shows as gone, with no action to take on it', () => {
  const html = render('42', { data: detail('42'), error: gone('42') });
  assert.match(html, /No job #42/);
  assert.match(html, /It has been deleted\./);
  assert.doesNotMatch(html, />Delete</, 'no Delete button for a job that is not there');
  assert.doesNotMatch(html, /showing the last known state/);
});

test('another error keeps the old data, with the error above it', () => {
  const failing = render('44', { data: detail('44'), error: new ApiError(503, 'unavailable', 'the database is not answering') });
  assert.match(failing, /Refreshing failed: showing the last known state/);
  assert.match(failing, /Job <span class="font-mono">#44<\/span>/);
});

test("a raised attempt limit says what raised it: attempts given back (snoozes, hand-backs, revokes), else requeues", () => {
  const a = (...outcomes: string[]) => outcomes.map((outcome) => ({ outcome }));
  assert.equal(attemptsRaised(4, 3, a('snoozed', 'completed')), 'enqueued with 3; 1 given back (snoozed, handed back or revoked)');
  assert.equal(attemptsRaised(6, 3, a('aborted', 'failed', 'failed', 'failed')), 'enqueued with 3; 1 given back (snoozed, handed back or revoked), the rest by requeues');
  assert.equal(attemptsRaised(6, 3, a('failed', 'failed', 'failed')), 'enqueued with 3; raised by requeues');
});
