/**
 * What a worker process's first drain costs against its later ones: one process drains
 * --jobs no-op jobs (batch settings: prefetch 490, C=10) several times over, each round
 * with a new Runner and a new Redis receiver but the same process (so the same JIT-compiled
 * code and open pool connections), and prints each round's rate and the process's CPU per
 * job. The first round pays for V8 compiling and optimising the hot path as it runs; the
 * shared harness's N=20000 drains (10,000 jobs per process) are mostly such a first round.
 *
 *   node --import tsx scripts/worker-warmup.ts [--jobs 10000] [--rounds 4]
 *
 * It creates a database of its own on DATABASE_URL's server (default the local one) and a
 * Redis prefix of its own, and drops both at the end.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { createPool } from '../lib/db/client';
import { runMigrations } from '../lib/db/migrate';
import { createLogger } from '../lib/log';
import * as ops from '../lib/queue/ops';
import { RedisDoorbell, RedisReceiver } from '../lib/queue/signal';
import { unlinkMatching } from '../test/redis-keys';
import { Runner } from '../worker/runner';
import { numberOption } from './cli-args';

const JOBS = numberOption('jobs', 10_000);
const ROUNDS = numberOption('rounds', 4);
const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const name = `lh_warmup_${process.pid}`;
const log = createLogger({ script: 'worker-warmup' });

const admin = new pg.Client(serverUrl);
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(serverUrl);
url.pathname = `/${name}`;
const databaseUrl = url.toString();
try {
  await runMigrations(databaseUrl);
  const pool = createPool(databaseUrl, { name: 'worker', max: 10 });
  const heartbeatPool = createPool(databaseUrl, { name: 'heartbeat', max: 2 });
  const producer = createPool(databaseUrl, { name: 'producer', max: 2 });
  const doorbell = new RedisDoorbell(redisUrl, name, producer, log);
  const enqueue = async () => {
    for (let k = 0; k < JOBS; k += 1000) {
      const n = Math.min(1000, JOBS - k);
      await ops.jobEnqueue(producer, Array.from({ length: n }, (_, i) => ({ type: 'bench', queue: 'warmup', payload: { i: k + i } })), { doorbell });
    }
  };
  const completed = async () => (await producer.query(`SELECT count(*)::int AS n FROM jobs WHERE status = 'completed'`)).rows[0].n as number;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      await enqueue(); // before the round's runner starts: the drain alone is timed
      const receiver = new RedisReceiver(redisUrl, name, log);
      await receiver.ready(5_000);
      const runner = new Runner({
        pool, heartbeatPool, databaseUrl, receiver, doorbell, log,
        handlers: { bench: () => {} },
        queues: ['warmup'], concurrency: 10, prefetch: 490,
        leaseMs: 30_000, heartbeatMs: 10_000, pollMs: 2_000, recoverMs: 5_000, signalGraceMs: 1_000,
      });
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await runner.start();
      const target = (round + 1) * JOBS;
      while ((await completed()) < target) await new Promise((r) => setTimeout(r, 10));
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      await runner.stop(1_000);
      await receiver.close();
      console.log(
        `round ${round + 1}${round === 0 ? ' (cold)' : ''}: ${Math.round(JOBS / seconds)} jobs/s, ` +
          `CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms (${((cpu.user + cpu.system) / JOBS).toFixed(1)} µs per job)`,
      );
    }
  } finally {
    await doorbell.close();
    await Promise.all([pool.end(), heartbeatPool.end(), producer.end()]);
    const redis = new Redis(redisUrl);
    await unlinkMatching(redis, `${name}:*`);
    redis.disconnect();
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
