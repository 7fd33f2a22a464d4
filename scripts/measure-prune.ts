/**
 * How fast retention deletes finished jobs on a large table: the recover sweep's prune walk
 * (ops.pruneFor, in the sweep's time budget) called again and again until the walk reaches
 * young jobs or the table's end (from where the shared walk stood), with the windows of LEASEHOLD_KEEP_*_MS (lib/config.ts).
 *
 *   DATABASE_URL=postgres://…/lh_big node --import tsx scripts/load-jobs.ts --rows 1000000 --create
 *   DATABASE_URL=postgres://…/lh_big LEASEHOLD_KEEP_COMPLETED_MS=259200000 node --import tsx scripts/measure-prune.ts
 *
 * Deletes what it reports: run it on a table made for the measurement.
 */
import pg from 'pg';
import { loadConfig } from '../lib/config';
import { pruneFor } from '../lib/queue/ops';

const cfg = loadConfig();
if (!cfg.databaseUrl) throw new Error('set DATABASE_URL (a database made for this: rows are deleted)');
const client = new pg.Client({ connectionString: cfg.databaseUrl, application_name: 'leasehold:measure-prune' });
await client.connect();
const count = async () => (await client.query(`SELECT count(*)::int AS n FROM jobs`)).rows[0].n as number;
const before = await count();
const sweeps: { ms: number; deleted: number; scanned: number }[] = [];
let cursor: string;
do {
  const t0 = performance.now();
  // No rest after the walk: the next run of this script walks again at once.
  const r = await pruneFor(client, { retention: cfg.retention, restMs: 0 });
  sweeps.push({ ms: performance.now() - t0, deleted: r.deleted, scanned: r.scanned });
  cursor = r.cursor;
} while (cursor !== '0');
const after = await count();
const total = (k: 'ms' | 'deleted' | 'scanned') => sweeps.reduce((n, s) => n + s[k], 0);
const ms = sweeps.map((s) => s.ms).sort((a, b) => a - b);
console.log(JSON.stringify({
  retention: cfg.retention,
  rowsBefore: before,
  rowsAfter: after,
  sweeps: sweeps.length,
  deleted: total('deleted'),
  scanned: total('scanned'),
  seconds: +(total('ms') / 1000).toFixed(2),
  deletedPerSecond: Math.round(total('deleted') / (total('ms') / 1000)),
  sweepMsMedian: +ms[Math.floor(ms.length / 2)]!.toFixed(0),
  sweepMsMax: +ms[ms.length - 1]!.toFixed(0),
}));
await client.end();
