/**
 * Where a job's latency goes, at the shared harness's latency workload (one job at a time at
 * a fixed rate, two worker processes of concurrency 10 waiting on the doorbell): from just
 * before the enqueue call to the handler's start, split at the database's own timestamps —
 * the job row's `created_at` (the INSERT's transaction start) and its `started_at` (the
 * claim's). Before it, the same rate of lone INSERTs into a plain table: what one durable
 * commit costs here, the floor under each of the two commits on a job's path.
 *
 *   DATABASE_URL=postgres://… node --import tsx scripts/latency-breakdown.ts [--jobs 1000] [--rate 200] [--slowest 20]
 *
 * Uses the queue `latency-breakdown` and the table `latency_breakdown_commits` (dropped at
 * the end), and deletes its jobs when done. Timestamps are comparable across the processes
 * and the database because they share one machine's clock.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createPool } from '../lib/db/client';
import { runMigrations } from '../lib/db/migrate';
import { createLogger } from '../lib/log';
import * as ops from '../lib/queue/ops';
import { RedisDoorbell, RedisReceiver } from '../lib/queue/signal';
import { Runner } from '../worker/runner';
import { numberOption, percentile } from './cli-args';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('DATABASE_URL is required (a database this script may migrate and add jobs to)');
  process.exit(2);
}
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = 'latency-breakdown';
const log = createLogger({ script: 'latency-breakdown' });
/**
 * Wall-clock milliseconds with sub-millisecond resolution, comparable across processes and
 * with the database's timestamps: anchored at the moment Date.now() ticks over to a new
 * millisecond. (performance.timeOrigin, anchored once at start, was off by 1–2 ms between
 * processes here.)
 */
const epochMs = (() => {
  const first = Date.now();
  let now = first;
  while (now === first) now = Date.now();
  const anchor = now - performance.now();
  return () => anchor + performance.now();
})();

interface Seen {
  i: number;
  handlerAt: number;
}

if (process.argv[2] === 'worker') await worker(process.argv[3]!);
else await main();

async function worker(prefix: string) {
  const pool = createPool(databaseUrl!, { name: 'worker', max: 10 });
  const heartbeatPool = createPool(databaseUrl!, { name: 'heartbeat', max: 2 });
  const doorbell = new RedisDoorbell(redisUrl, prefix, pool, log);
  const receiver = new RedisReceiver(redisUrl, prefix, log);
  await receiver.ready(5_000);
  const seen: Seen[] = [];
  const runner = new Runner({
    pool,
    heartbeatPool,
    databaseUrl: databaseUrl!,
    receiver,
    doorbell,
    handlers: { probe: (payload) => void seen.push({ i: (payload as { i: number }).i, handlerAt: epochMs() }) },
    queues: [QUEUE],
    concurrency: 10,
    leaseMs: 30_000,
    heartbeatMs: 10_000,
    pollMs: 2_000,
    recoverMs: 5_000,
    signalGraceMs: 1_000,
    log,
  });
  await runner.start();
  process.send!('ready');
  process.once('message', async () => {
    await runner.stop(1_000);
    await Promise.all([receiver.close(), doorbell.close()]);
    await Promise.all([pool.end(), heartbeatPool.end()]);
    process.send!(seen, () => process.exit(0));
  });
}

async function main() {
  const JOBS = numberOption('jobs', 1_000);
  const RATE = numberOption('rate', 200);
  const SLOWEST = numberOption('slowest', 0);
  const WARMUP = 20;
  await runMigrations(databaseUrl!);
  const pool = createPool(databaseUrl!, { name: 'producer', max: 4 });
  const paced = async (n: number, once: (i: number) => Promise<void>) => {
    const start = epochMs();
    for (let i = 0; i < n; i++) {
      const due = start + (i * 1000) / RATE;
      while (epochMs() < due) await new Promise((r) => setTimeout(r, Math.max(0, due - epochMs() - 1)));
      await once(i);
    }
  };
  const line = (what: string, xs: number[]) =>
    console.log(
      `${what.padEnd(52)} p50 ${percentile(xs, 50).toFixed(2).padStart(6)}  p90 ${percentile(xs, 90).toFixed(2).padStart(6)}  ` +
        `p99 ${percentile(xs, 99).toFixed(2).padStart(6)}  max ${Math.max(...xs).toFixed(2).padStart(6)} ms`,
    );

  // The floor: one durable commit, the same rate, nothing else running.
  await pool.query('CREATE TABLE IF NOT EXISTS latency_breakdown_commits (id bigserial PRIMARY KEY, payload jsonb NOT NULL)');
  const commits: number[] = [];
  await paced(WARMUP + JOBS, async (i) => {
    const t0 = performance.now();
    await pool.query({ name: 'latency_breakdown_commit', text: 'INSERT INTO latency_breakdown_commits (payload) VALUES ($1)', values: [{ i }] });
    if (i >= WARMUP) commits.push(performance.now() - t0);
  });
  await pool.query('DROP TABLE latency_breakdown_commits');

  const prefix = `lh-latency-${randomBytes(3).toString('hex')}:`;
  const doorbell = new RedisDoorbell(redisUrl, prefix, pool, log);
  const workers = [0, 1].map(() => fork(fileURLToPath(import.meta.url), ['worker', prefix], { execArgv: ['--import', 'tsx'] }));
  await Promise.all(workers.map((w) => new Promise((r) => w.once('message', r))));
  await new Promise((r) => setTimeout(r, 1_000)); // idle, waiting on the doorbell, as in the harness
  const enqueueMs: number[] = [];
  const enqueuedAt: number[] = [];
  await paced(WARMUP + JOBS, async (i) => {
    const t0 = epochMs();
    enqueuedAt[i] = t0;
    await ops.jobEnqueue(pool, [{ type: 'probe', queue: QUEUE, payload: { i } }], { doorbell });
    enqueueMs[i] = epochMs() - t0;
  });
  const handlerAt = new Map<number, number>();
  for (const w of workers) {
    const seen = new Promise<Seen[]>((r) => w.once('message', (m) => r(m as Seen[])));
    w.send('stop');
    for (const s of await seen) handlerAt.set(s.i, s.handlerAt);
  }
  const { rows } = await pool.query<{ i: number; created: number; started: number }>(
    `SELECT (payload->>'i')::int AS i, extract(epoch FROM created_at) * 1000 AS created, extract(epoch FROM started_at) * 1000 AS started
       FROM jobs WHERE queue = $1`,
    [QUEUE],
  );
  const parts = { total: [] as number[], enqueue: [] as number[], toInsert: [] as number[], insertToClaim: [] as number[], claimToHandler: [] as number[] };
  for (const r of rows) {
    const at = handlerAt.get(r.i);
    if (r.i < WARMUP || at === undefined) continue;
    parts.total.push(at - enqueuedAt[r.i]!);
    parts.enqueue.push(enqueueMs[r.i]!);
    parts.toInsert.push(r.created - enqueuedAt[r.i]!);
    parts.insertToClaim.push(r.started - r.created);
    parts.claimToHandler.push(at - r.started);
  }
  console.log(`${JOBS} jobs at ${RATE}/s (after ${WARMUP} unmeasured), 2 worker processes × 10\n`);
  line('a lone INSERT and its commit (the floor)', commits);
  line('job: enqueue call to handler start (the harness)', parts.total);
  line('  the enqueue call (INSERT, commit, Redis push)', parts.enqueue);
  line('  enqueue call to the INSERT starting', parts.toInsert);
  line('  INSERT start to claim start (commit, push, pop)', parts.insertToClaim);
  line('  claim start to handler start (claim, commit)', parts.claimToHandler);
  // The slowest jobs, in the order they came: when in the run (s) and where their time went.
  const slow = rows
    .filter((r) => r.i >= WARMUP && handlerAt.has(r.i))
    .map((r) => ({ r, total: handlerAt.get(r.i)! - enqueuedAt[r.i]! }))
    .sort((a, b) => b.total - a.total)
    .slice(0, SLOWEST)
    .sort((a, b) => a.r.i - b.r.i);
  if (slow.length) console.log(`\nthe ${slow.length} slowest (s into the run, which began at ${new Date(enqueuedAt[WARMUP]!).toISOString()}: total = enqueue call + INSERT start to claim start + claim start to handler, ms)`);
  for (const { r, total } of slow) {
    const at = handlerAt.get(r.i)!;
    console.log(
      `  ${((enqueuedAt[r.i]! - enqueuedAt[WARMUP]!) / 1000).toFixed(3).padStart(6)}: ${total.toFixed(1).padStart(5)} = ${enqueueMs[r.i]!.toFixed(1)} + ${(r.started - r.created).toFixed(1)} + ${(at - r.started).toFixed(1)}`,
    );
  }
  if (parts.total.length !== JOBS) console.log(`(${JOBS - parts.total.length} jobs not seen by a handler)`);
  await pool.query('DELETE FROM jobs WHERE queue = $1', [QUEUE]);
  await doorbell.close();
  await pool.end();
}
