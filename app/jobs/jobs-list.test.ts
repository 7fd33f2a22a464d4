/**
 * The jobs list, rendered to markup (no browser) from the query cache as a failed refresh
 * leaves it: the rows stay, and the page says they are as last read (it used to go on
 * showing them as live, with no word of the error).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { ApiError } from '@/lib/api/client';
import { jobLookupQuery, jobPagesQuery } from '@/lib/api/jobs';
import type { JobPageDto } from '@/lib/api/types';
import { RefreshProvider } from '@/lib/ui/refresh';
import { JobsList } from './jobs-list';

const at = '2026-01-31T12:00:00.000Z';
const row = (id: string, over: Record<string, unknown> = {}) => ({
  id,
  queue: 'mail',
  type: 'demo.noop',
  status: 'queued' as const,
  attemptCount: 0,
  maxAttempts: 3,
  workerId: null,
  leaseExpiresAt: null,
  leaseRemainingMs: null,
  runAt: at,
  cancelRequestedAt: null,
  error: null,
  createdAt: at,
  startedAt: null,
  finishedAt: null,
  ...over,
});

function render(lookupError: Error | null, over: Record<string, unknown> = {}, page0: { at?: string; over?: Record<string, unknown> } = {}) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const filters = { status: 'queued' as const };
  const page = { jobs: [row('7', page0.over)], nextCursor: null, dbNow: page0.at ?? at, headId: '7', newerAfter: null, partial: null } as unknown as JobPageDto;
  qc.setQueryData([...jobPagesQuery(filters).queryKey], { pages: [page], pageParams: [null] });
  const lookup = qc.getQueryCache().build(qc, { queryKey: [...jobLookupQuery(['7'], false).queryKey] });
  // The refresh had worked (its last answer is held), then failed, or not.
  lookup.setState({
    data: { jobs: [row('7', over)], dbNow: at },
    dataUpdatedAt: Date.now() - 5_000,
    error: lookupError,
    errorUpdatedAt: lookupError ? Date.now() : 0,
    status: lookupError ? 'error' : 'success',
    fetchStatus: 'idle',
  });
  return renderToStaticMarkup(createElement(QueryClientProvider, { client: qc }, createElement(RefreshProvider, null, createElement(JobsList, { filters }))));
}

test('rows whose refresh fails stay on screen, under a line saying so', () => {
  const html = render(new ApiError(503, 'unavailable', 'the database is not answering'));
  assert.match(html, /Refreshing failed: the rows are as last read/);
  assert.match(html, /the database is not answering/);
  assert.match(html, />#?7</, 'the last rows read are still shown');
});

test('a row the page read after the lookup (its first page read again: "Show N new") is shown as the page read it, not as the older lookup had it', () => {
  const later = '2026-01-31T12:00:05.000Z';
  const html = render(null, { status: 'queued' }, { at: later, over: { status: 'cancelled', finishedAt: later } });
  assert.match(html, /cancelled/);
  assert.doesNotMatch(html, />queued</);
  const earlier = '2026-01-31T11:59:55.000Z';
  const lookupNewer = render(null, { status: 'cancelled', finishedAt: at }, { at: earlier });
  assert.match(lookupNewer, /cancelled/, 'a lookup newer than the page wins, as before');
  assert.doesNotMatch(lookupNewer, />queued</);
});

test('no such line while the refresh works', () => {
  assert.doesNotMatch(render(null), /Refreshing failed/);
});

test('a job that lost its lease twice in a row is flagged a suspect (a likely poison) in the list; once is not', () => {
  assert.match(render(null, { leaseLostStreak: 2 }), /suspect: 2 leases lost in a row/);
  assert.doesNotMatch(render(null, { leaseLostStreak: 1 }), /suspect/);
});

test("a running job's row says the checkpoint its handler saved last", () => {
  const html = render(null, {
    status: 'running',
    workerId: 'host:1:ab',
    attemptCount: 2,
    leaseExpiresAt: '2026-01-31T12:00:30.000Z',
    heartbeatAt: at,
    checkpoints: {
      'step-1': { value: 1, attempt: 1, at: '2026-01-31T11:59:00.000Z' },
      'step-2': { value: 2, attempt: 2, at: '2026-01-31T11:59:50.000Z' },
    },
  });
  assert.match(html, /checkpoint <bdi>step-2<\/bdi> /);
  assert.doesNotMatch(html, /checkpoint step-1/);
});
