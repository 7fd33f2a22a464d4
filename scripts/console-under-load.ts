/**
 * What watching costs: the workers drain a batch of no-op jobs on a big table (load it
 * first with scripts/load-jobs.ts) with no console open, then with ten consoles polling
 * every second, then with none again. Prints the drain rate of each round, the cost of
 * the consoles in percent, and the p50/p95 of the consoles' requests while the workers
 * drain at full speed.
 *
 *   DATABASE_URL=... PORT=3471 LEASEHOLD_AUTH=off npm run web &
 *   DATABASE_URL=... BASE=http://127.0.0.1:3471 node --import tsx scripts/console-under-load.ts \
 *     [--jobs 60000] [--consoles 10] [--processes 2] [--concurrency 10]
 *
 * Each console does what an open jobs page does every second: the shared stats, the newest
 * page of 50 jobs, and the "N new" count. The batch goes to a queue of its own, so the
 * million rows around it stay as they are.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPool } from '../lib/db/client';
import * as ops from '../lib/queue/ops';
import { RedisDoorbell } from '../lib/queue/signal';

const args = process.argv.slice(2);
const opt = (name: string, d: number) => {
  const k = args.indexOf(`--${name}`);
  return k >= 0 ? Number(args[k + 1]) : d;
};
const JOBS = opt('jobs', 60_000);
const CONSOLES = opt('consoles', 10);
const P = opt('processes', 2);
const C = opt('concurrency', 10);
const BASE = process.env.BASE ?? 'http://127.0.0.1:3000';
const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
if (!DATABASE_URL) throw new Error('set DATABASE_URL (a database loaded with scripts/load-jobs.ts)');

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const prefix = `lh_under_load_${process.pid}`;
const pool = createPool(DATABASE_URL, { name: 'under-load', max: 4 });
const doorbell = new RedisDoorbell(REDIS_URL, prefix, pool);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]! : NaN;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ten browser tabs on the jobs page, as far as the server can tell. */
function startConsoles(n: number) {
  const timings = new Map<string, number[]>();
  let running = true;
  let newest = '0';
  const get = async (label: string, url: string) => {
    const t = performance.now();
    const res = await fetch(BASE + url);
    const body = await res.json();
    if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
    const list = timings.get(label) ?? [];
    list.push(performance.now() - t);
    timings.set(label, list);
    return body;
  };
  const one = async (k: number) => {
    await sleep((1000 * k) / n); // spread over the second, as real viewers are
    while (running) {
      const started = Date.now();
      const [, page] = await Promise.all([get('GET /api/stats', '/api/stats'), get('GET /api/jobs?limit=50', '/api/jobs?limit=50')]);
      newest = page.jobs?.[0]?.id ?? newest;
      await get('GET /api/jobs/newer', `/api/jobs/newer?after=${newest}`);
      await sleep(Math.max(0, 1000 - (Date.now() - started)));
    }
  };
  const done = Promise.all(Array.from({ length: n }, (_, k) => one(k)));
  return {
    timings,
    async stop() {
      running = false;
      await done;
    },
  };
}

async function drain(round: string, queue: string): Promise<number> {
  for (let i = 0; i < JOBS; i += 5_000) {
    const n = Math.min(5_000, JOBS - i);
    await ops.jobEnqueue(pool, Array.from({ length: n }, (_, k) => ({ queue, type: 'demo.noop', payload: { i: i + k } })), { doorbell });
  }
  // Workers start on a full queue, rung as producers ring it; the clock runs
  // from their start until every job of the batch is completed.
  const t0 = performance.now();
  const workers = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'worker/bin/worker.ts'), '--processes', String(P), '--concurrency', String(C), '--queues', queue],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DATABASE_URL, REDIS_URL, LEASEHOLD_REDIS_PREFIX: prefix, LEASEHOLD_POLL_MS: '200', LEASEHOLD_LOG: 'warn' },
    },
  );
  try {
    for (;;) {
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM jobs WHERE queue = $1 AND status IN ('queued', 'retrying', 'running')`,
        [queue],
      );
      if (rows[0].n === 0) break;
      await sleep(250);
    }
  } finally {
    workers.kill('SIGTERM');
    await new Promise((r) => workers.once('exit', r));
  }
  const s = (performance.now() - t0) / 1000;
  const rate = JOBS / s;
  console.log(`${round}: ${JOBS} jobs in ${s.toFixed(1)} s = ${Math.round(rate)} jobs/s (including worker start-up)`);
  return rate;
}

const { rows } = await pool.query(`SELECT reltuples::bigint AS n FROM pg_class WHERE relname = 'jobs'`);
console.log(`jobs table ≈ ${rows[0].n} rows; ${JOBS} no-op jobs per round; P=${P} C=${C}; ${CONSOLES} consoles polling every second`);
const quiet1 = await drain('no console', `${prefix}_a`);
const consoles = startConsoles(CONSOLES);
const watched = await drain(`${CONSOLES} consoles`, `${prefix}_b`);
await consoles.stop();
const quiet2 = await drain('no console again', `${prefix}_c`);
const quiet = (quiet1 + quiet2) / 2;
console.log(`\ncost of ${CONSOLES} consoles: ${(((quiet - watched) / quiet) * 100).toFixed(1)} % of the drain rate (${Math.round(watched)} vs ${Math.round(quiet)} jobs/s)\n`);
console.log('| request (while draining) | n | p50 ms | p95 ms |\n| --- | ---: | ---: | ---: |');
for (const [label, xs] of consoles.timings) console.log(`| ${label} | ${xs.length} | ${pct(xs, 50).toFixed(1)} | ${pct(xs, 95).toFixed(1)} |`);
// The batches' jobs are removed again, so the table is what it was.
await pool.query(`DELETE FROM job_attempts WHERE job_id IN (SELECT job_id FROM jobs WHERE queue LIKE $1)`, [`${prefix}_%`]);
await pool.query(`DELETE FROM jobs WHERE queue LIKE $1`, [`${prefix}_%`]);
await doorbell.close();
await pool.end();
