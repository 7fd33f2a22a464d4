/**
 * What one round trip costs the client's CPU on this machine: a prepared `SELECT 1` to
 * PostgreSQL and a Redis PING, one after the other, with the wall time and the process's
 * CPU time (user + system) per round trip — against the same CPU spent on pure computation.
 * On the virtual machines these benchmarks run on, a process that blocks on a socket and is
 * woken again is charged far more CPU than the bytes it moves would suggest: that is what
 * sets the price of a statement for the worker (see README, Performance).
 *
 *   node --import tsx scripts/round-trip-cost.ts [--n 3000]
 *   DATABASE_URL=postgres://… REDIS_URL=redis://… node --import tsx scripts/round-trip-cost.ts
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { numberOption } from './cli-args';

const N = numberOption('n', 3_000);
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function measure(what: string, once: () => Promise<unknown>) {
  for (let k = 0; k < Math.min(500, N); k++) await once(); // warm up: JIT, prepared statement
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let k = 0; k < N; k++) await once();
  const wallUs = ((performance.now() - t0) * 1000) / N;
  const cpu = process.cpuUsage(cpu0);
  console.log(
    `${what.padEnd(28)} wall ${wallUs.toFixed(1).padStart(7)} µs   client CPU ${((cpu.user + cpu.system) / N).toFixed(1).padStart(7)} µs ` +
      `(user ${(cpu.user / N).toFixed(1)}, system ${(cpu.system / N).toFixed(1)}) per round trip`,
  );
}

const client = new pg.Client({ connectionString: databaseUrl, application_name: 'leasehold:round-trip-cost' });
await client.connect();
const redis = new Redis(redisUrl, { lazyConnect: true });
await redis.connect();
try {
  await measure('PostgreSQL SELECT 1', () => client.query({ name: 'round_trip', text: 'SELECT 1' }));
  await measure('Redis PING', () => redis.ping());
  // The same loop with no I/O: what the promise machinery alone costs.
  await measure('no I/O (a resolved promise)', () => Promise.resolve());
} finally {
  await client.end();
  redis.disconnect();
}
