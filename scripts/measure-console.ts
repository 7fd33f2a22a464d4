/**
 * Measures the console against a running server (README "Console" figures): p50/p95 of
 * the API calls the console makes and of page loads in Chromium (navigation until the
 * page shows its data), over repeated requests, one at a time.
 *
 *   BASE=http://127.0.0.1:3000 node --import tsx scripts/measure-console.ts [--n 30] [--pages 10]
 *
 * With sign-in on, give TOKEN=lh_… (an operator token: `npx leasehold token create --name
 * measure --scope operator`) for the API calls; the page loads need a console started with
 * LEASEHOLD_AUTH=off (a measuring machine of your own).
 *
 * Load the database first (scripts/load-jobs.ts). Read-only: it never changes a job
 * (action calls are previews).
 */
import os from 'node:os';
import { chromium } from '@playwright/test';
import { numberOption, percentile, timedJson } from './cli-args';

const BASE = process.env.BASE ?? 'http://127.0.0.1:3000';
const N = numberOption('n', 30);
const PAGES = numberOption('pages', 10);

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(1) : Math.round(ms).toString());

const time = (method: string, path: string, body?: unknown) =>
  timedJson(BASE + path, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(process.env.TOKEN ? { authorization: `Bearer ${process.env.TOKEN}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });

const rows: string[] = [];
async function measure(label: string, method: string, path: string, body?: unknown, note = '') {
  await time(method, path, body);
  await time(method, path, body);
  const xs: number[] = [];
  let last: any;
  for (let k = 0; k < N; k++) {
    const r = await time(method, path, body);
    xs.push(r.ms);
    last = r.json;
  }
  const extra =
    note ||
    (last?.jobs ? `${last.jobs.length} rows${last.partial ? `, partial (searched ${last.partial.scannedIds} ids)` : ''}` : last?.total !== undefined && last?.preview ? `${last.total} jobs` : '');
  rows.push(`| ${label} | \`${method} ${path.length > 70 ? path.slice(0, 67) + '…' : path}\` | ${fmt(percentile(xs, 50))} | ${fmt(percentile(xs, 95))} | ${extra} |`);
  console.error(`${label}: p50 ${fmt(percentile(xs, 50))} ms, p95 ${fmt(percentile(xs, 95))} ms`);
  return last;
}

const loadBefore = os.loadavg()[0]!;
const stats = (await time('GET', '/api/stats')).json;
const head = (await time('GET', '/api/jobs?limit=1')).json.jobs[0].id as string;
const dead = (await time('GET', '/api/dead-letter')).json;
const group = dead.groups[0];

await measure('stats (shared cache)', 'GET', '/api/stats', undefined, `total ${stats.totalKind === 'exact' ? '' : '≈'}${stats.total.toLocaleString('en')}`);
// The cost of one refresh of that cache (paid once per refresh interval, whatever the number of viewers).
const computeMs: number[] = [];
const seen = new Set<string>();
while (computeMs.length < Math.min(N, 10)) {
  const s = (await time('GET', '/api/stats')).json;
  if (!seen.has(s.computedAt)) {
    seen.add(s.computedAt);
    computeMs.push(s.computeMs);
  }
  await new Promise((r) => setTimeout(r, 500));
}
rows.push(`| stats refresh (the shared computation) | — | ${fmt(percentile(computeMs, 50))} | ${fmt(percentile(computeMs, 95))} | ${computeMs.length} refreshes |`);
// fresh=1: each request reads the database. Without it, viewers of a page share one read a
// second (lib/server/read-cache.ts), and back-to-back requests would time that cache.
await measure('jobs: newest page', 'GET', '/api/jobs?limit=50&fresh=1');
await measure('jobs: status=failed', 'GET', '/api/jobs?status=failed&limit=50&fresh=1');
await measure('jobs: status=running', 'GET', '/api/jobs?status=running&limit=50&fresh=1');
await measure('jobs: status=completed, deep page', 'GET', `/api/jobs?status=completed&limit=50&cursor=${Math.floor(Number(head) / 2)}&fresh=1`);
await measure('jobs: queue=emails', 'GET', '/api/jobs?queue=emails&limit=50&fresh=1');
await measure('jobs: status+queue+type', 'GET', '/api/jobs?status=completed&queue=emails&type=email.send&limit=50&fresh=1');
await measure('jobs: error text', 'GET', '/api/jobs?error=timeout&limit=50&fresh=1');
await measure('jobs: payload account=42', 'GET', `/api/jobs?payload=${encodeURIComponent('account=42')}&limit=50&fresh=1`);
await measure('jobs: error text, no match (whole-table search)', 'GET', '/api/jobs?error=no-such-error&limit=50&fresh=1');
await measure('jobs: dead-letter group', 'GET', `/api/jobs?status=failed&type=${encodeURIComponent(group.type)}&fingerprint=${group.fingerprint}&limit=50&fresh=1`);
await measure('job detail', 'GET', `/api/jobs/${head}`, undefined, 'with attempts');
await measure('live refresh of 50 rows (shared: one read a second)', 'GET', `/api/jobs/lookup?ids=${Array.from({ length: 50 }, (_, k) => Number(head) - k).join(',')}`);
await measure('"N new" count (shared: one read a second)', 'GET', `/api/jobs/newer?after=${Number(head) - 500}`);
await measure('dead letter groups (shared: one read per 3 s)', 'GET', '/api/dead-letter', undefined, `${dead.groups.length} groups over the newest ${dead.examined.toLocaleString('en')} failed`);
await measure('workers', 'GET', '/api/workers');
await measure('preview: requeue a dead-letter group', 'POST', '/api/actions/requeue', { preview: true, filter: { status: 'failed', type: group.type, fingerprint: group.fingerprint } });
await measure('preview: recover sweep', 'POST', '/api/actions/recover', { preview: true, all: true });

// Page loads in Chromium: navigation until the page shows its data.
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
const pageRows: string[] = [];
const pages: [string, string, string][] = [
  ['overview', '/', '[data-testid="queue-table"]'],
  ['jobs (newest)', '/jobs', '[data-testid="job-table"]'],
  ['jobs ?status=failed', '/jobs?status=failed', '[data-testid="job-table"]'],
  ['jobs ?queue=emails&type=email.send', '/jobs?queue=emails&type=email.send', '[data-testid="job-table"]'],
  ['job detail', `/jobs/${head}`, '[data-testid="payload"]'],
  ['dead letter', '/dead-letter', '[data-testid="dead-letter-groups"]'],
  // with no worker on record the page's data is its empty state
  ['workers', '/workers', '[data-testid="worker-table"], [data-testid="empty-state"]'],
];
// The page itself notes when each page's data first appears (a MutationObserver from the
// first byte of the document): the time from its navigation start, as a browser's own
// timeline shows it. Timed from here instead, a load also counts Playwright's round trips
// to the browser and its polling for the selector, about 250 ms per load on this machine.
await page.addInitScript((selectors: string[]) => {
  const seen: Record<string, number> = {};
  (window as unknown as { __dataOnScreen: Record<string, number> }).__dataOnScreen = seen;
  const mo = new MutationObserver(() => {
    for (const s of selectors) if (seen[s] === undefined && document.querySelector(s)) seen[s] = performance.now();
  });
  mo.observe(document, { subtree: true, childList: true });
}, [...new Set(pages.map(([, , ready]) => ready))]);
for (const [label, path, ready] of pages) {
  const inPage: number[] = [];
  const outside: number[] = [];
  for (let k = 0; k < PAGES + 1; k++) {
    const t = performance.now();
    await page.goto(BASE + path, { waitUntil: 'commit' });
    await page.waitForSelector(ready, { timeout: 30_000 });
    const elapsed = performance.now() - t;
    const shown = await page.waitForFunction((s) => (window as unknown as { __dataOnScreen: Record<string, number> }).__dataOnScreen[s], ready);
    if (k > 0) {
      // the first load warms the browser cache
      inPage.push(Number(await shown.jsonValue()));
      outside.push(elapsed);
    }
  }
  pageRows.push(
    `| ${label} | \`${path.length > 50 ? path.slice(0, 47) + '…' : path}\` | ${fmt(percentile(inPage, 50))} | ${fmt(percentile(inPage, 95))} | ${fmt(percentile(outside, 50))} |`,
  );
  console.error(`page ${label}: p50 ${fmt(percentile(inPage, 50))} ms, p95 ${fmt(percentile(inPage, 95))} ms (from the driver: p50 ${fmt(percentile(outside, 50))} ms)`);
}
await browser.close();

console.log(`Machine: ${os.cpus().length} cores; 1-minute load average ${loadBefore.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end.\n`);
console.log(`API (${N} sequential requests each, after 2 warm-ups; ms):\n`);
console.log('| what | call | p50 | p95 | note |\n| --- | --- | ---: | ---: | --- |');
console.log(rows.join('\n'));
console.log(`\nPages in Chromium (${PAGES} loads each after one warm-up: from the navigation's start until the data is on screen, as the page's own clock shows it; the last column times the same loads from the test driver; ms):\n`);
console.log('| page | path | p50 | p95 | from the driver: p50 |\n| --- | --- | ---: | ---: | ---: |');
console.log(pageRows.join('\n'));
