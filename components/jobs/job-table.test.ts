/** The jobs list's rows: an earlier attempt's error is not shown as a present failure. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { dateTime } from '@/lib/ui/format';
import { JobTable, type TableJob, whenText } from './job-table';

const row = (id: string, status: string, error: string | null) =>
  ({
    id, status, error, queue: 'q', type: 't', attemptCount: 2, maxAttempts: 3, attemptBudget: 3, priority: 0, workerId: status === 'running' ? 'w' : null,
    createdAt: '2026-12-01T10:00:00.000Z', runAt: '2026-12-01T10:00:00.000Z', startedAt: null, finishedAt: null, heartbeatAt: null, leaseExpiresAt: null,
  }) as unknown as TableJob;

test('a running or queued row says its error is an earlier attempt\'s, in grey; a failed or retrying one keeps it red', () => {
  const html = renderToStaticMarkup(
    createElement(JobTable, {
      rows: [row('1', 'running', 'lease expired: worker stopped renewing'), row('2', 'retrying', 'boom'), row('3', 'failed', 'bang'), row('4', 'queued', 'lost')],
      nowMs: Date.parse('2026-12-01T10:05:00.000Z'),
      selected: new Set<string>(),
      onToggle: () => {},
      onToggleAll: () => {},
    }),
  );
  // The error cell of the row whose error is `text`.
  const cell = (text: string) => html.match(new RegExp(`<span class="[^"]*"(?: data-earlier-attempt="")?>(?:earlier attempt: )?<bdi>${text}`))?.[0] ?? '';
  assert.match(cell('lease expired'), /text-zinc-500[^"]*" data-earlier-attempt="">earlier attempt: <bdi>/);
  assert.match(cell('lost'), /earlier attempt: <bdi>lost/);
  assert.match(cell('boom'), /text-red-700/);
  assert.doesNotMatch(cell('boom'), /earlier attempt/);
  assert.match(cell('bang'), /text-red-700/);
});

test('When: a retry says how long it has been due, a far due time is a date, a job due as made says when it was made', () => {
  const now = Date.parse('2026-12-01T10:15:00.000Z');
  const j = (status: string, runAt: string, over: Record<string, string | null> = {}) =>
    ({ status, runAt, createdAt: '2026-12-01T10:00:00.000Z', finishedAt: null, startedAt: null, ...over }) as Parameters<typeof whenText>[0];
  assert.equal(whenText(j('retrying', '2026-12-01T10:01:00.000Z'), now).text, 'due 14 min ago');
  assert.equal(whenText(j('queued', '2026-12-01T10:00:00.000Z'), now).text, 'created 15 min ago');
  assert.equal(whenText(j('queued', '2026-12-01T10:20:00.000Z'), now).text, 'due in 5 min');
  assert.equal(whenText(j('queued', '2029-12-26T07:00:00.000Z'), now).text, `due ${dateTime('2029-12-26T07:00:00.000Z')}`);
  assert.equal(whenText(j('running', '2026-12-01T10:00:00.000Z', { startedAt: '2026-12-01T10:14:00.000Z' }), now).text, 'started 1 min ago');
});
