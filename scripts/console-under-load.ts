/**
 * What watching costs: the workers drain a batch of no-op jobs on a big table (load it
 * first with scripts/load-jobs.ts) with no console open, then with ten consoles refreshing
 * every second, then with none again, and so on (--pairs rounds watched, each between two
 * unwatched, the table restored and vacuumed after each). Prints the drain rate of each
 * round, the cost of the consoles in percent (each watched round against the mean of its
 * neighbours; the median of those), and the p50/p95 of the consoles' requests and live events while
 * the workers drain at full speed.
 *
 *   DATABASE_URL=... PORT=3471 LEASEHOLD_AUTH=off npm run web &
 *   DATABASE_URL=... BASE=http://127.0.0.1:3471 node --import tsx scripts/console-under-load.ts \
 *     [--jobs 60000] [--consoles 10] [--processes 2] [--concurrency 10] [--mode live|poll] [--pairs 3]
 *
 * On one machine the consoles' own CPU (this script plays them) and the console server's
 * are taken from the workers too: the round with consoles prints both, as a share of the
 * machine (the server's pid is found by its port on Linux), to tell them from the cost the
 * consoles' queries put on PostgreSQL.
 *
 * Each console is one browser tab refreshing every second (the console's fastest setting;
 * the default is 2 s) what its page shows: even-numbered tabs are on the overview (the
 * shared stats), odd-numbered ones on the jobs page (the live rows of its 50 jobs, by id,
 * and the "N new" count above them). With --mode live (what the console does) a tab keeps
 * one live feed (GET /api/live) open; with --mode poll it sends a request per query each
 * second, as the console did before the feed. Every tenth second a tab loads its page
 * again (GET /api/stats, or the 50 newest jobs), as someone moving around would, which
 * gives the request timings; the overview tabs then also ask a do-nothing Node server (the
 * yardstick row: what answering takes on this machine under the same load). The batch goes to a queue of its own, so the million rows
 * around it stay as they are.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../lib/config';
import { createPool } from '../lib/db/client';
import * as ops from '../lib/queue/ops';
import { RedisDoorbell } from '../lib/queue/signal';
import { unlinkMatching } from '../test/redis-keys';
import { SseReader } from '../test/sse';
import { numberOption, option, percentile, timedJson } from './cli-args';

const JOBS = numberOption('jobs', 60_000);
const CONSOLES = numberOption('consoles', 10);
const P = numberOption('processes', 2);
const C = numberOption('concurrency', 10);
/** live: the pages' live feed (what the console does); poll: a request per query per second (without the feed). */
const MODE = option('mode', 'live');
if (MODE !== 'live' && MODE !== 'poll') throw new Error('--mode is live or poll');
/** Rounds with consoles watching, each between two without (medians are reported). */
const PAIRS = numberOption('pairs', 3);
const BASE = process.env.BASE ?? 'http://127.0.0.1:3000';
const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
if (!DATABASE_URL) throw new Error('set DATABASE_URL (a database loaded with scripts/load-jobs.ts)');

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const prefix = `lh_under_load_${process.pid}`;
const pool = createPool(DATABASE_URL, { name: 'under-load', max: 4 });
const doorbell = new RedisDoorbell(REDIS_URL, prefix, pool);

/** A round that takes longer than this has gone wrong (workers down): stop, clean up. */
const DRAIN_DEADLINE_MS = 15 * 60_000;
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

/**
 * A yardstick: a Node HTTP server that answers `{}` and does nothing else, in a process of
 * its own as the console is. What it takes to answer under the same load is what any server
 * on this machine takes (waiting for a core to wake up on, and this script's own wake-ups);
 * the console's figures beyond it are its own cost.
 */
async function startYardstick(): Promise<{ url: string; stop: () => void }> {
  const code = `require('node:http').createServer((q, s) => s.end('{}')).listen(0, '127.0.0.1', function () { console.log(this.address().port); })`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
    child.once('exit', (c) => reject(new Error(`the yardstick server exited (${c})`)));
  });
  return { url: `http://127.0.0.1:${port}/`, stop: () => child.kill() };
}

/** Browser tabs on the overview and the jobs page, as far as the server can tell. */
function startConsoles(n: number, yardstick: string) {
  const timings = new Map<string, number[]>();
  const note = (label: string, ms: number) => {
    const list = timings.get(label) ?? [];
    list.push(ms);
    timings.set(label, list);
  };
  let running = true;
  const get = async (label: string, url: string) => {
    const { ms, json } = await timedJson(url.startsWith('http') ? url : BASE + url);
    note(label, ms);
    return json;
  };
  /**
   * The live feed as the page keeps it: one stream, reopened when what it watches changes.
   * Notes how long the first event took, and how late each next one came (its gap past
   * the second).
   */
  const feed = () => {
    let current: { url: string; stop: AbortController; done: Promise<void>; ended: boolean } | null = null;
    let failure: unknown = null;
    const open = (url: string) => {
      const stop = new AbortController();
      const stream = { url, stop, done: Promise.resolve(), ended: false };
      stream.done = (async () => {
        const t = performance.now();
        const res = await fetch(BASE + url, { signal: stop.signal });
        if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
        const sse = new SseReader(res.body!);
        let last = 0;
        for (let e = await sse.next(); e; e = await sse.next()) {
          const now = performance.now();
          if (!last) note('live: first event', now - t);
          else if (now - last > 100) note('live: event lateness', now - last - 1000);
          last = now;
          if (e.event === 'problem') throw new Error(`${url}: ${e.data}`);
          if (e.event === 'bye') break;
        }
      })()
        .catch((err) => {
          if (!stop.signal.aborted) failure ??= err;
        })
        .finally(() => (stream.ended = true));
      return stream;
    };
    return {
      /** Keeps a stream open on `url`: a new one when it changed, or when the last one ended (bye). */
      watch(url: string) {
        if (failure) throw failure;
        if (current?.url === url && !current.ended) return;
        current?.stop.abort();
        current = open(url);
      },
      async close() {
        current?.stop.abort();
        await current?.done;
        if (failure) throw failure;
      },
    };
  };
  const overview = () => {
    let tick = 0;
    const live = MODE === 'live' ? feed() : null;
    return {
      async poll() {
        // The page's own load (every tenth second, as someone moving around would), then the feed or a poll.
        if (!live || tick++ % 10 === 0) {
          await get('GET /api/stats', '/api/stats');
          await get('(yardstick: a do-nothing Node server)', yardstick);
        }
        live?.watch('/api/live?stats=1&every=1000');
      },
      close: () => live?.close(),
    };
  };
  const jobsPage = () => {
    let ids: string[] = [];
    let anchor = '0';
    let tick = 0;
    const live = MODE === 'live' ? feed() : null;
    return {
      async poll() {
        if (tick++ % 10 === 0) {
          const page = await get('GET /api/jobs?limit=50', '/api/jobs?limit=50');
          ids = (page.jobs ?? []).map((j: { id: string }) => j.id);
          anchor = page.headId ?? anchor;
        }
        if (live) return live.watch(`/api/live?${ids.length ? `ids=${ids.join(',')}&` : ''}after=${anchor}&every=1000`);
        await Promise.all([
          ids.length ? get('GET /api/jobs/lookup', `/api/jobs/lookup?ids=${ids.join(',')}`) : null,
          get('GET /api/jobs/newer', `/api/jobs/newer?after=${anchor}`),
        ]);
      },
      close: () => live?.close(),
    };
  };
  const one = async (k: number) => {
    await sleep((1000 * k) / n); // spread over the second, as real viewers are
    const tab = k % 2 === 0 ? overview() : jobsPage();
    while (running) {
      const started = Date.now();
      await tab.poll();
      await sleep(Math.max(0, 1000 - (Date.now() - started)));
    }
    await tab.close();
  };
  const done = Promise.all(Array.from({ length: n }, (_, k) => one(k)));
  done.catch(() => {}); // reported by stop(), after the round, so the cleanup still runs
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
      if (performance.now() - t0 > DRAIN_DEADLINE_MS) throw new Error(`${round}: the batch did not drain in ${DRAIN_DEADLINE_MS / 60_000} minutes`);
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

/**
 * Removes a round's jobs and vacuums, so every round starts from the same table: without
 * it each round leaves hundreds of thousands of dead row versions, which a server without
 * autovacuum (this one's shared PostgreSQL has it off) keeps, and later rounds read slower.
 */
async function removeBatches(pattern: string) {
  await pool.query(`DELETE FROM ended_attempts WHERE job_id IN (SELECT job_id FROM jobs WHERE queue LIKE $1)`, [pattern]);
  await pool.query(`DELETE FROM jobs WHERE queue LIKE $1`, [pattern]);
  await pool.query('VACUUM (ANALYZE) jobs, ended_attempts');
}

const median = (xs: number[]) => percentile(xs, 50);

const yardstick = await startYardstick();
try {
  const { rows } = await pool.query(`SELECT reltuples::bigint AS n FROM pg_class WHERE relname = 'jobs'`);
  console.log(
    `jobs table ≈ ${rows[0].n} rows; ${JOBS} no-op jobs per round; P=${P} C=${C} at nice ${loadConfig().workerNice} (LEASEHOLD_WORKER_NICE); ${CONSOLES} consoles refreshing every second ` +
      `(${MODE === 'live' ? 'live feed' : 'polling'}); ${PAIRS} rounds watched, each between two unwatched`,
  );
  let n = 0;
  const round = async (label: string) => {
    const queue = `${prefix}_${n++}`;
    try {
      return await drain(label, queue);
    } finally {
      await removeBatches(queue);
    }
  };
  const quiet = [await round('no console')];
  const watched: number[] = [];
  const costs: number[] = [];
  const timings = new Map<string, number[]>();
  const pid = serverPid();
  let serverCpu = 0;
  let selfCpu = 0;
  let wall = 0;
  for (let k = 0; k < PAIRS; k++) {
    const before = { server: cpuSeconds(pid), self: process.cpuUsage(), at: performance.now() };
    const consoles = startConsoles(CONSOLES, yardstick.url);
    watched.push(await round(`${CONSOLES} consoles`).finally(() => consoles.stop()));
    wall += (performance.now() - before.at) / 1000;
    serverCpu += cpuSeconds(pid) - before.server;
    const self = process.cpuUsage(before.self);
    selfCpu += (self.user + self.system) / 1e6;
    for (const [label, xs] of consoles.timings) timings.set(label, [...(timings.get(label) ?? []), ...xs]);
    quiet.push(await round('no console'));
    // Against the mean of the unwatched rounds on either side: the machine drifts.
    const around = (quiet[k]! + quiet[k + 1]!) / 2;
    costs.push(((around - watched[k]!) / around) * 100);
  }
  const share = (cpu: number) => `${((cpu / wall / os.availableParallelism()) * 100).toFixed(1)} %`;
  console.log(
    `\nCPU while watched (share of the machine's ${os.availableParallelism()} cores): console server ${share(serverCpu)}, ` +
      `the ${CONSOLES} consoles (this script) ${share(selfCpu)}`,
  );
  console.log(
    `cost of ${CONSOLES} consoles: median ${median(costs).toFixed(1)} % of the drain rate (rounds: ${costs.map((c) => c.toFixed(1)).join(', ')} %; ` +
      `median ${Math.round(median(watched))} jobs/s watched vs ${Math.round(median(quiet))} unwatched)\n`,
  );
  console.log('| request or event (while draining) | n | p50 ms | p95 ms |\n| --- | ---: | ---: | ---: |');
  for (const [label, xs] of timings) console.log(`| ${label} | ${xs.length} | ${percentile(xs, 50).toFixed(1)} | ${percentile(xs, 95).toFixed(1)} |`);
} finally {
  // Whatever a failed round left behind; and the ids the workers' sweeps rang under this
  // run's prefix for the big table's due jobs.
  await removeBatches(`${prefix}_%`);
  await unlinkMatching(doorbell.redis, `${prefix}:*`);
  yardstick.stop();
  await doorbell.close();
  await pool.end();
}
