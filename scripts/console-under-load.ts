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
 * On one machine the consoles' own CPU (this script plays them) and the console server's
 * are taken from the workers too: the round with consoles prints both, as a share of the
 * machine (the server's pid is found by its port on Linux), to tell them from the cost the
 * consoles' queries put on PostgreSQL.
 *
 * Each console is one browser tab polling every second (the console's fastest refresh
 * setting; the default is 2 s) what its page polls: even-numbered tabs are on the overview
 * (the shared stats), odd-numbered ones on the jobs page (the live rows of its 50 jobs, by
 * id, and the "N new" count above them; the page of the 50 newest is loaded when the tab
 * opens and again every tenth second, as someone paging or filtering would). The batch goes
 * to a queue of its own, so the million rows around it stay as they are.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPool } from '../lib/db/client';
import * as ops from '../lib/queue/ops';
import { RedisDoorbell } from '../lib/queue/signal';
import { numberOption, percentile } from './cli-args';

const JOBS = numberOption('jobs', 60_000);
const CONSOLES = numberOption('consoles', 10);
const P = numberOption('processes', 2);
const C = numberOption('concurrency', 10);
const BASE = process.env.BASE ?? 'http://127.0.0.1:3000';
const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
if (!DATABASE_URL) throw new Error('set DATABASE_URL (a database loaded with scripts/load-jobs.ts)');

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const prefix = `lh_under_load_${process.pid}`;
const pool = createPool(DATABASE_URL, { name: 'under-load', max: 4 });
const doorbell = new RedisDoorbell(REDIS_URL, prefix, pool);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Busy and total CPU ticks of the whole machine (/proc/stat), to tell how saturated a round was. */
function machineTicks(): { busy: number; total: number } {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = f[3]! + f[4]!; // idle + iowait
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: NaN, total: NaN };
  }
}

/** The pid listening on BASE's port (Linux, ss), to read its CPU time; null when unknown. */
function serverPid(): number | null {
  try {
    const port = new URL(BASE).port;
    const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' });
    const m = /pid=(\d+)/.exec(out);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
/** CPU seconds a process has used (utime + stime from /proc), or NaN. */
function cpuSeconds(pid: number | null): number {
  if (pid === null) return NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime: clock ticks of 1/100 s (USER_HZ)
  } catch {
    return NaN;
  }
}

/** Browser tabs on the overview and the jobs page, as far as the server can tell. */
function startConsoles(n: number) {
  const timings = new Map<string, number[]>();
  let running = true;
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
  const overview = async () => {
    await get('GET /api/stats', '/api/stats');
  };
  const jobsPage = () => {
    let ids: string[] = [];
    let anchor = '0';
    let tick = 0;
    return async () => {
      if (tick++ % 10 === 0) {
        const page = await get('GET /api/jobs?limit=50', '/api/jobs?limit=50');
        ids = (page.jobs ?? []).map((j: { id: string }) => j.id);
        anchor = page.headId ?? anchor;
      }
      await Promise.all([
        ids.length ? get('GET /api/jobs/lookup', `/api/jobs/lookup?ids=${ids.join(',')}`) : null,
        get('GET /api/jobs/newer', `/api/jobs/newer?after=${anchor}`),
      ]);
    };
  };
  const one = async (k: number) => {
    await sleep((1000 * k) / n); // spread over the second, as real viewers are
    const poll = k % 2 === 0 ? overview : jobsPage();
    while (running) {
      const started = Date.now();
      await poll();
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
  const m0 = machineTicks();
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
  const m1 = machineTicks();
  const busy = ((m1.busy - m0.busy) / (m1.total - m0.total)) * 100;
  console.log(`${round}: ${JOBS} jobs in ${s.toFixed(1)} s = ${Math.round(rate)} jobs/s (including worker start-up; machine ${busy.toFixed(0)} % busy)`);
  return rate;
}

const { rows } = await pool.query(`SELECT reltuples::bigint AS n FROM pg_class WHERE relname = 'jobs'`);
console.log(`jobs table ≈ ${rows[0].n} rows; ${JOBS} no-op jobs per round; P=${P} C=${C}; ${CONSOLES} consoles polling every second`);
const quiet1 = await drain('no console', `${prefix}_a`);
const pid = serverPid();
const before = { server: cpuSeconds(pid), self: process.cpuUsage(), at: performance.now() };
const consoles = startConsoles(CONSOLES);
const watched = await drain(`${CONSOLES} consoles`, `${prefix}_b`);
await consoles.stop();
const wall = (performance.now() - before.at) / 1000;
const selfCpu = process.cpuUsage(before.self);
const share = (cpu: number) => `${((cpu / wall / os.availableParallelism()) * 100).toFixed(1)} %`;
console.log(
  `  CPU while watched (share of the machine's ${os.availableParallelism()} cores): console server ${share(cpuSeconds(pid) - before.server)}, ` +
    `the ${CONSOLES} consoles (this script) ${share((selfCpu.user + selfCpu.system) / 1e6)}`,
);
const quiet2 = await drain('no console again', `${prefix}_c`);
const quiet = (quiet1 + quiet2) / 2;
console.log(`\ncost of ${CONSOLES} consoles: ${(((quiet - watched) / quiet) * 100).toFixed(1)} % of the drain rate (${Math.round(watched)} vs ${Math.round(quiet)} jobs/s)\n`);
console.log('| request (while draining) | n | p50 ms | p95 ms |\n| --- | ---: | ---: | ---: |');
for (const [label, xs] of consoles.timings) console.log(`| ${label} | ${xs.length} | ${percentile(xs, 50).toFixed(1)} | ${percentile(xs, 95).toFixed(1)} |`);
// The batches' jobs are removed again, so the table is what it was.
await pool.query(`DELETE FROM job_attempts WHERE job_id IN (SELECT job_id FROM jobs WHERE queue LIKE $1)`, [`${prefix}_%`]);
await pool.query(`DELETE FROM jobs WHERE queue LIKE $1`, [`${prefix}_%`]);
await doorbell.close();
await pool.end();
