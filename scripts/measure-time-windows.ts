/**
 * Times the jobs list filtered by time windows (createdSince, finishedSince; with and without
 * a status or a queue; windows few jobs match and windows most do) in-process, without HTTP:
 * p50/p95 of listJobs over repeated reads, one at a time. The moments are taken from the
 * loaded jobs' newest enqueue and finish (a window of their last 20 s matches a few dozen
 * jobs of a million), so the figures do not drift as the clock moves on after the load.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/lh_big node --import tsx scripts/measure-time-windows.ts [--n 20] [--only text]
 *
 * Load the database first (scripts/load-jobs.ts). Read-only.
 */
import pg from 'pg';
import { listJobs, type ListFilters } from '../lib/queue/read';
import { numberOption, option, percentile } from './cli-args';

const N = numberOption('n', 20);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
let statements = 0;
const counted = { query: (...a: Parameters<typeof pool.query>) => (statements++, pool.query(...a)) } as unknown as pg.Pool;
const { rows: [m] } = await pool.query(`SELECT max(created_at) AS c, max(finished_at) AS f FROM jobs`);
const back = (t: Date, s: number) => new Date(t.getTime() - s * 1000).toISOString();
// The loaded jobs' last 20 s (about 30 of a million), and a moment after them all.
const cFew = back(m.c, 20);
const fFew = back(m.f, 20);
const cNone = back(m.c, -60);
const fNone = back(m.f, -60);
const cases: [string, Omit<ListFilters, 'limit'>][] = [
  ['createdSince few (20 s)', { createdSince: cFew }],
  ['createdSince none', { createdSince: cNone }],
  ['createdSince 24h (many)', { createdSince: '24h' }],
  ['createdSince 7d (all)', { createdSince: '7d' }],
  ['status=completed&createdSince few', { status: 'completed', createdSince: cFew }],
  ['status=queued&createdSince few', { status: 'queued', createdSince: cFew }],
  ['status=running&createdSince 1h', { status: 'running', createdSince: back(m.c, 3600) }],
  ['queue=emails&createdSince few', { queue: 'emails', createdSince: cFew }],
  ['queue=emails&createdSince 1h', { queue: 'emails', createdSince: back(m.c, 3600) }],
  ['finishedSince few', { finishedSince: fFew }],
  ['finishedSince none', { finishedSince: fNone }],
  ['finishedSince 24h (many)', { finishedSince: '24h' }],
  ['status=completed&finishedSince few', { status: 'completed', finishedSince: fFew }],
  ['status=completed&finishedSince none', { status: 'completed', finishedSince: fNone }],
  ['status=completed&finishedSince 1h', { status: 'completed', finishedSince: back(m.f, 3600) }],
  ['status=completed&finishedSince 24h (many)', { status: 'completed', finishedSince: '24h' }],
  ['status=failed&finishedSince few', { status: 'failed', finishedSince: fFew }],
  ['status=failed&createdSince few', { status: 'failed', createdSince: cFew }],
  ['status=cancelled&finishedSince 1h', { status: 'cancelled', finishedSince: back(m.f, 3600) }],
  ['queue=emails&finishedSince few', { queue: 'emails', finishedSince: fFew }],
  ['queue=emails&status=completed&finishedSince 1h', { queue: 'emails', status: 'completed', finishedSince: back(m.f, 3600) }],
];
const only = option('only', '');
console.log(`| case | p50 ms | p95 ms | rows | statements | partial |\n| --- | ---: | ---: | ---: | ---: | --- |`);
for (const [label, f] of cases) {
  if (only && !label.includes(only)) continue;
  const xs: number[] = [];
  let last;
  for (let k = 0; k < N + 1; k++) {
    const t = performance.now();
    statements = 0;
    last = await listJobs(counted, { ...f, limit: 50 });
    if (k > 0) xs.push(performance.now() - t);
  }
  const fmt = (x: number) => (x < 10 ? x.toFixed(1) : Math.round(x).toString());
  console.log(`| ${label} | ${fmt(percentile(xs, 50))} | ${fmt(percentile(xs, 95))} | ${last!.jobs.length}${last!.nextCursor ? '+' : ''} | ${statements} | ${last!.partial ? `searched ${last!.partial.scannedIds}` : ''} |`);
}
await pool.end();
