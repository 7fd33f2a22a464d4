/** The overview's "Job types" table: user text escaped, the failing kinds marked and linked to their jobs. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { runTime } from '../../lib/ui/format';
import { failureRate, percent, TypeTable } from './type-table';

const row = (over: Partial<Parameters<typeof TypeTable>[0]['rows'][number]> = {}) => ({
  queue: 'mail',
  type: 'email.send',
  completed: 95,
  retried: 4,
  failed: 1,
  cancelled: 0,
  snoozed: 0,
  leaseLost: 0,
  runs: 100,
  runP50Ms: 7.5,
  runP95Ms: 1_840,
  runMeanMs: 120,
  runsPastTop: 0,
  ...over,
});

test('failure rate: failed and retried attempts among those with an outcome', () => {
  assert.equal(failureRate(row()), 5);
  assert.equal(failureRate(row({ completed: 0, retried: 0, failed: 0 })), null);
});

test('a failure rate near 100 % reads 100 % only when nothing succeeded', () => {
  // 1 completed of 300: a type that still succeeds now and then, not one that is wholly broken.
  assert.equal(percent(failureRate(row({ completed: 1, retried: 0, failed: 299 }))), '99.7 %');
  assert.equal(percent(99.97), '>99.9 %');
  assert.equal(percent(100), '100 %');
  assert.equal(percent(42.4), '42 %');
  assert.equal(percent(0.05), '<0.1 %');
  assert.equal(percent(0), '0 %');
});

test('run times read at their scale', () => {
  assert.deepEqual([0.42, 7.5, 42.4, 1_840, 192_000, null].map(runTime), ['0.4 ms', '7.5 ms', '42 ms', '1.8 s', '3 min 12 s', '—']);
});

test('a row per kind: counts, the failure rate, run time quantiles; queue and type escaped; links to its jobs and its dead letter', () => {
  const html = renderToStaticMarkup(createElement(TypeTable, { rows: [row(), row({ queue: '<b>q</b>', type: '<img src=x onerror=alert(1)>', failed: 0, retried: 0, runP50Ms: null, runP95Ms: null, runs: 0 })] }));
  assert.match(html, /href="\/jobs\?queue=mail&amp;type=email.send"/);
  assert.match(html, /href="\/jobs\?queue=mail&amp;type=email.send&amp;status=failed"/, 'the failed count opens those jobs');
  assert.match(html, /data-testid="type-failure-rate">5.0 %</);
  assert.match(html, /7.5 ms \/ 1.8 s/);
  assert.match(html, /title="100 runs, mean 120 ms"/);
  assert.ok(!html.includes('<img'), 'no markup from user text');
  assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
  assert.match(html, /&lt;b&gt;q&lt;\/b&gt;/);
  assert.match(html, /— \/ —/, 'no run: no quantile');
  assert.match(html, /data-testid="type-failure-rate">0 %</, 'none failed: 0 %, not 0.0 %');
});

test("run times past the histogram's top read as more than it; a p95 of a few runs is not shown", () => {
  const cell = (over: Parameters<typeof row>[0]) => /data-testid="type-run-time"[^>]*>(.*?)<\/td>/.exec(renderToStaticMarkup(createElement(TypeTable, { rows: [row(over)] })))![1]!.replace(/<[^>]+>/g, '');
  assert.equal(cell({ runsPastTop: 100, runP50Ms: 3_600_000, runP95Ms: 3_600_000 }), '&gt; 1 h / &gt; 1 h', 'every run took over an hour');
  assert.equal(cell({ runsPastTop: 10, runP50Ms: 60_000, runP95Ms: 3_600_000 }), '1 min / &gt; 1 h', 'a tenth of them did');
  assert.equal(cell({ runs: 1, runsPastTop: 0, runP50Ms: 1_800, runP95Ms: 2_400 }), '1.8 s / –', 'one run: no p95');
});

test('lost leases are a column of their own, marked when any, and not in the failure rate', () => {
  const html = renderToStaticMarkup(createElement(TypeTable, { rows: [row({ leaseLost: 3 }), row({ type: 'calm' })] }));
  assert.match(html, /data-testid="type-lease-lost">3</);
  assert.match(html, /text-red-700[^"]*" data-testid="type-lease-lost">3</);
  assert.match(html, /" data-testid="type-lease-lost">0</);
  assert.equal(failureRate(row({ leaseLost: 50 })), 5);
});
