/**
 * A Redis server of the test's own, on a free port, for tests that flush, stop or kill
 * Redis (the shared one is never touched).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from '../lib/ports';
import { cleanup } from './cleanup';
import { waitFor } from './wait';

export interface OwnRedis {
  url: string;
  port: number;
  client(): Redis;
  /** SIGKILL the server (a crash: nothing is flushed). */
  kill(): Promise<void>;
  /** Start it again on the same port. */
  start(): Promise<void>;
}

export async function ownRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let proc: ChildProcess | null = null;
  const clients: Redis[] = [];
  const start = async () => {
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    await waitFor('own redis-server to answer', async () => {
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        probe.disconnect();
        return false;
      }
    });
    probe.disconnect();
  };
  const kill = async () => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await gone;
  };
  await start();
  cleanup(async () => {
    clients.forEach((c) => c.disconnect());
    await kill();
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    client: () => {
      const c = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
      c.on('error', () => {});
      clients.push(c);
      return c;
    },
    kill,
    start,
  };
}
