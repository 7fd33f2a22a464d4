/**
 * The schedules page, rendered to markup (no browser) from the query cache: a tick overdue
 * when the page read it says so, and why when no worker process is alive to enqueue it (it
 * said "due now" for good, and blamed the queue's consumers).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { scheduleKeys, statsKeys } from '@/lib/api/keys';
import type { SchedulesDto, StatsDto } from '@/lib/api/types';
import { RefreshProvider } from '@/lib/ui/refresh';
import { SchedulesView } from './schedules-view';

function render(nextInMs: number, workersAlive: number) {
  const now = Date.now();
  const schedules: SchedulesDto = {
    dbNow: new Date(now).toISOString(),
    schedules: [
      {
        name: 'nightly',
        cron: '0 3 * * *',
        timezone: 'UTC',
        queue: 'reports',
        type: 'demo.noop',
        payload: {},
        maxAttempts: 3,
        priority: 0,
        overlap: 'allow',
        enabled: true,
        nextRunAt: new Date(now + nextInMs).toISOString(),
        lastRunAt: null,
        lastJobId: null,
        lastError: null,
        lastErrorAt: null,
        paused: false,
        pausedAt: null,
        lastSkippedAt: null,
        lastSkippedJobId: null,
      },
    ],
  };
  const stats = { workersAlive, queues: [{ queue: 'reports', workersAlive }], queuesTruncated: false, types: { rows: [] } } as unknown as StatsDto;
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  qc.setQueryData([...scheduleKeys.all], schedules);
  qc.setQueryData([...statsKeys.all], stats);
  return renderToStaticMarkup(createElement(QueryClientProvider, { client: qc }, createElement(RefreshProvider, null, createElement(SchedulesView))));
}

test('a tick a minute past due when read, with no worker process alive: overdue, and why', () => {
  const html = render(-60_000, 0);
  assert.match(html, /data-testid="tick-overdue"[^>]*>overdue by 1 min/);
  assert.match(html, /No worker process is alive: no tick is enqueued until one starts/);
  assert.doesNotMatch(html, /No live worker consumes this queue/);
});

test('a tick just due is "due now"; with workers alive, no word of their absence', () => {
  const html = render(-2_000, 2);
  assert.match(html, />due now</);
  assert.doesNotMatch(html, /overdue|No worker process is alive/);
});
