// Leasehold as a row of the shared benchmark harness (../shared/bench, see its README).
//
//   BENCH_EXTRA_PEERS="node $PWD/bench/peer.mjs" bash ../shared/bench/run.sh
//   npm run bench            (the same adapter, driven by bench/run.ts)
//
// Settings: the production defaults except where the harness fixes them (C, P). Each of
// the P processes runs a Runner with concurrency C, one blocking Redis connection, a
// heartbeat every lease/3, the periodic recover sweep; every job gets a fenced lease and
// an attempt row. Enqueue: ops.jobEnqueue in chunks of 1000 (one INSERT statement and one
// Redis pipeline per chunk) for throughput, one job per call for latency.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

register();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// run.sh runs us inside its working copy (cwd), whose harness has its own node_modules;
// npm run bench points BENCH_HARNESS at a copy inside this project.
const harnessFile = process.env.BENCH_HARNESS ?? path.join(process.cwd(), 'lib/harness.mjs');
const { runPeer, closeAll } = await import(pathToFileURL(harnessFile).href);
const { createPool } = await import(pathToFileURL(path.join(root, 'lib/db/client.ts')).href);
const ops = await import(pathToFileURL(path.join(root, 'lib/queue/ops/index.ts')).href);
const { RedisDoorbell, RedisReceiver } = await import(pathToFileURL(path.join(root, 'lib/queue/signal.ts')).href);
const { Runner, HELD_SIGNALS_PER_SLOT, HELD_SIGNALS_MS } = await import(pathToFileURL(path.join(root, 'worker/runner.ts')).href);
const { createLogger } = await import(pathToFileURL(path.join(root, 'lib/log.ts')).href);

const version = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version;
const LEASE_MS = 30_000;
// Variants (VARIANT=...):
//   (none)  production defaults: claim only what free slots can run (claims of <= C jobs)
//   batch   prefetch 490: one claim statement carries up to 500 jobs, held under renewed
//           leases until a slot frees (the analogue of graphile-worker's localQueue.size
//           500 in its perftest settings)
// LEASEHOLD_PREFETCH overrides the prefetch of either.
// Diagnostics: LEASEHOLD_BENCH_PROFILE=<dir> (a CPU profile per worker), LEASEHOLD_BENCH_TRACE=<dir>
// (every query of each worker's pool with its timing), LEASEHOLD_BENCH_TIMELINE=1 (claims and
// completions per 50 ms per worker, from the jobs' timestamps, on stderr).
const VARIANTS = { '': 0, batch: 490 };
const variant = process.env.VARIANT ?? '';
if (!(variant in VARIANTS)) throw new Error(`unknown leasehold VARIANT ${variant}`);
const PREFETCH = Number(process.env.LEASEHOLD_PREFETCH ?? VARIANTS[variant]);
const log = createLogger({ bench: 'leasehold' });
const redisUrl = (cfg) => `redis://${cfg.redisHost}:${cfg.redisPort}`;

const adapter = {
  system: 'leasehold',
  version,
  usesPg: true,
  usesRedis: true,
  enqueueApi: { bulk: 'jobEnqueue(inputs[]) chunks of 1000', one: 'jobEnqueue([input])' },
  settings: (cfg) => ({
    variant: variant || 'default',
    concurrency: cfg.C,
    leaseMs: LEASE_MS,
    heartbeatMs: LEASE_MS / 3,
    prefetch: PREFETCH,
    wakeup: `Redis BLMPOP (a count when ids are waiting; while the list is long, ${HELD_SIGNALS_PER_SLOT} x C ids beyond the free slots held up to ${HELD_SIGNALS_MS} ms)`,
    fencedLease: true,
    attemptRows: true,
  }),

  async setup(ctx) {
    // Imported here, in the orchestrator only: the worker processes never migrate, and the
    // migrator (drizzle's) would add to their memory.
    const { runMigrations } = await import(pathToFileURL(path.join(root, 'lib/db/migrate.ts')).href);
    await runMigrations(ctx.pgUrl);
    ctx.state.pool = createPool(ctx.pgUrl, { name: 'bench', max: 4 });
    ctx.state.doorbell = new RedisDoorbell(redisUrl(ctx.cfg), ctx.redisPrefix, ctx.state.pool, log);
    await new Promise((r) => ctx.state.doorbell.redis.once('ready', r));
  },
  async enqueueBulk(ctx, payloads) {
    for (let k = 0; k < payloads.length; k += 1000) {
      await ops.jobEnqueue(
        ctx.state.pool,
        payloads.slice(k, k + 1000).map((payload) => ({ type: 'bench', queue: ctx.queueName, payload })),
        { doorbell: ctx.state.doorbell },
      );
    }
  },
  async enqueueOne(ctx, payload) {
    await ops.jobEnqueue(ctx.state.pool, [{ type: 'bench', queue: ctx.queueName, payload }], { doorbell: ctx.state.doorbell });
  },
  async verify(ctx) {
    const { rows: [r] } = await ctx.state.pool.query(
      `SELECT count(*) FILTER (WHERE status = 'completed')::int AS completed,
              count(*) FILTER (WHERE status = 'failed')::int AS failed,
              count(*) FILTER (WHERE status IN ('queued', 'retrying'))::int AS pending,
              count(*) FILTER (WHERE status = 'running')::int AS active
         FROM jobs`);
    return r;
  },
  async teardown(ctx) {
    // LEASEHOLD_BENCH_TIMELINE=1: how the drain went, from the jobs' own timestamps (stderr).
    if (process.env.LEASEHOLD_BENCH_TIMELINE && ctx.state.pool) await printTimeline(ctx.state.pool);
    await closeAll(() => ctx.state.doorbell?.close(), () => ctx.state.pool?.end());
  },

  async prepareWorker(ctx) {
    const cfg = ctx.cfg;
    const s = ctx.state;
    s.pool = createPool(ctx.pgUrl, { name: 'worker', max: Math.min(cfg.C, 8) + 2 });
    s.heartbeatPool = createPool(ctx.pgUrl, { name: 'heartbeat', max: 2 });
    s.doorbell = new RedisDoorbell(redisUrl(cfg), ctx.redisPrefix, s.pool, log);
    s.receiver = new RedisReceiver(redisUrl(cfg), ctx.redisPrefix, log);
    await s.receiver.ready(5_000);
    // Open every connection now, as the graphile-worker peer does, so that connecting (a
    // backend's start and the session settings) is not part of the run.
    await Promise.all([openAll(s.pool, Math.min(cfg.C, 8) + 2), openAll(s.heartbeatPool, 2)]);
    if (process.env.LEASEHOLD_BENCH_TRACE) s.trace = traceQueries(s.pool);
  },
  async startWorkers(ctx, onJob) {
    const s = ctx.state;
    s.runner = new Runner({
      pool: s.pool,
      heartbeatPool: s.heartbeatPool,
      databaseUrl: ctx.pgUrl,
      receiver: s.receiver,
      doorbell: s.doorbell,
      handlers: { bench: (payload) => { onJob(payload); } },
      queues: [ctx.queueName],
      concurrency: ctx.cfg.C,
      leaseMs: LEASE_MS,
      heartbeatMs: LEASE_MS / 3,
      pollMs: 2_000,
      recoverMs: 5_000,
      signalGraceMs: 1_000,
      prefetch: PREFETCH,
      log,
    });
    if (process.env.LEASEHOLD_BENCH_PROFILE) await startProfile(s);
    s.cpuAtStart = process.cpuUsage();
    await s.runner.start();
  },
  async stopWorkers(ctx) {
    const s = ctx.state;
    if (s.profiler) await stopProfile(s, ctx.index);
    if (s.trace) await s.trace.write(path.join(process.env.LEASEHOLD_BENCH_TRACE, `trace-${ctx.index}.txt`));
    if (s.cpuAtStart) {
      const u = process.cpuUsage(s.cpuAtStart);
      console.error(`[leasehold worker ${ctx.index}] CPU while draining: ${((u.user + u.system) / 1000).toFixed(0)} ms (user ${(u.user / 1000).toFixed(0)}, system ${(u.system / 1000).toFixed(0)}), claimed ${s.runner.stats.claimed}, max RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
    }
    await closeAll(() => s.runner?.stop(1_000), () => s.receiver?.close(), () => s.doorbell?.close(), () => s.pool?.end(), () => s.heartbeatPool?.end());
  },
};

async function openAll(pool, n) {
  const clients = await Promise.all(Array.from({ length: n }, () => pool.connect()));
  clients.forEach((c) => c.release());
}

/** Every query of the worker's pool: when it was sent (ms from the first), how long it took, its name, its rows. */
function traceQueries(pool) {
  const log = [];
  const query = pool.query.bind(pool);
  pool.query = (cfg, values) => {
    const t = performance.now();
    const p = query(cfg, values);
    p.then((r) => log.push([t, performance.now() - t, cfg.name ?? String(cfg.text ?? cfg).slice(0, 40), r?.rowCount]), () => {});
    return p;
  };
  return {
    async write(file) {
      const { writeFileSync } = await import('node:fs');
      const t0 = log[0]?.[0] ?? 0;
      writeFileSync(file, log.map(([t, d, n, c]) => `${(t - t0).toFixed(1)} +${d.toFixed(1)} ms ${n} (${c} rows)`).join('\n') + '\n');
    },
  };
}

/** Claims and completions per 50 ms from the first claim, per worker, read from the database's clock. */
async function printTimeline(pool) {
  const { rows } = await pool.query(`
    WITH t0 AS (SELECT min(started_at) AS t FROM jobs)
    SELECT b, worker_id,
           count(*) FILTER (WHERE kind = 'claim')::int AS claimed,
           count(*) FILTER (WHERE kind = 'done')::int AS completed
      FROM (SELECT worker_id, 'claim' AS kind, floor(extract(epoch FROM started_at - t0.t) * 20)::int AS b FROM jobs, t0
            UNION ALL
            SELECT worker_id, 'done', floor(extract(epoch FROM finished_at - t0.t) * 20)::int FROM jobs, t0) x
     GROUP BY b, worker_id ORDER BY b, worker_id`);
  const { rows: [span] } = await pool.query(`SELECT extract(epoch FROM max(finished_at) - min(started_at)) * 1000 AS ms FROM jobs`);
  console.error(`[leasehold timeline] first claim to last completion ${Number(span.ms).toFixed(0)} ms; per 50 ms (worker: claimed/completed)`);
  const byBucket = new Map();
  for (const r of rows) byBucket.set(r.b, `${byBucket.get(r.b) ?? ''} ${r.worker_id.slice(-6)}: ${r.claimed}/${r.completed}`);
  for (const [b, line] of byBucket) console.error(`  ${String(b * 50).padStart(5)} ms ${line}`);
}

// LEASEHOLD_BENCH_PROFILE=<dir>: a CPU profile of each worker process's run (.cpuprofile).
async function startProfile(s) {
  const { Session } = await import('node:inspector');
  s.profiler = new Session();
  s.profiler.connect();
  const post = (m, p) => new Promise((res, rej) => s.profiler.post(m, p, (e, r) => (e ? rej(e) : res(r))));
  s.profilerPost = post;
  await post('Profiler.enable');
  await post('Profiler.start');
}
async function stopProfile(s, index) {
  const { writeFileSync } = await import('node:fs');
  const { profile } = await s.profilerPost('Profiler.stop');
  writeFileSync(path.join(process.env.LEASEHOLD_BENCH_PROFILE, `worker-${index}.cpuprofile`), JSON.stringify(profile));
}

await runPeer(adapter);
