/**
 * Real worker processes for integration and crash tests, started with `node` directly
 * (an npx/npm wrapper would leave children running when killed). Every process started
 * here is killed when the test file ends, whatever happened.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanup } from './cleanup';
import { RUN_ID } from './env';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const tsx = import.meta.resolve('tsx');
const started = new Set<ChildProcess>();
let watching = false;

export interface Proc {
  child: ChildProcess;
  pid: number;
  /** Everything the process wrote to stdout/stderr so far. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startNode(
  script: string,
  args: string[],
  env: Record<string, string | undefined>,
  opts: { echo?: boolean; /** Start it at this nice value (nice(1) execs node: the pid is node's). */ nice?: number; /** Its working directory (default: the project's). */ cwd?: string } = {},
): Proc {
  const argv = [process.execPath, '--import', tsx, path.join(root, script), ...args];
  if (opts.nice !== undefined) argv.unshift('nice', '-n', String(opts.nice));
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: opts.cwd ?? root,
    env: { ...process.env, LEASEHOLD_LOG: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  if (!watching) {
    watching = true;
    cleanup(() => {
      for (const p of started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    });
  }
  let out = '';
  const collect = (d: Buffer) => {
    out += d.toString();
    if (opts.echo || process.env.TEST_ECHO) process.stderr.write(d);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    pid: child.pid!,
    output: () => out,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        // A process a test stopped (SIGSTOP, or a SIGTSTP that came before its handler) would
        // hold SIGTERM pending for ever: continue it first, so the test fails rather than hangs.
        child.kill('SIGCONT');
        child.kill('SIGTERM');
      }
      return exited;
    },
  };
}

export interface WorkerEnv {
  databaseUrl: string;
  redisUrl: string | null;
  prefix: string;
  leaseMs?: number;
  heartbeatMs?: number;
  recoverMs?: number;
  pollMs?: number;
  /** More variables; an undefined value removes one (from this process's environment too). */
  extra?: Record<string, string | undefined>;
}

/** The environment of a worker under test: short leases, its own Redis key prefix. */
export function workerEnv(w: WorkerEnv): Record<string, string | undefined> {
  return {
    DATABASE_URL: w.databaseUrl,
    REDIS_URL: w.redisUrl ?? 'off',
    LEASEHOLD_REDIS_PREFIX: w.prefix,
    LEASEHOLD_LEASE_MS: String(w.leaseMs ?? 2_000),
    LEASEHOLD_HEARTBEAT_MS: String(w.heartbeatMs ?? 500),
    LEASEHOLD_RECOVER_MS: String(w.recoverMs ?? 1_000),
    LEASEHOLD_POLL_MS: String(w.pollMs ?? 1_000),
    LEASEHOLD_SHUTDOWN_GRACE_MS: '2000',
    ...w.extra,
  };
}

/** The supervisor with P processes × C concurrency (npm run worker). */
export function startWorkers(w: WorkerEnv & { processes: number; concurrency: number; queues?: string; nice?: number; cwd?: string; prefetch?: number }): Proc {
  return startNode(
    'worker/bin/worker.ts',
    ['--processes', String(w.processes), '--concurrency', String(w.concurrency), '--queues', w.queues ?? 'default', ...(w.prefetch ? ['--prefetch', String(w.prefetch)] : [])],
    workerEnv(w),
    { nice: w.nice, cwd: w.cwd },
  );
}

/** A Redis key prefix of this test run's own (test/cleanup-dbs.ts deletes its keys when the run ends). */
export const uniquePrefix = (what: string) => `lh_test_${RUN_ID}_${what}_${randomBytes(4).toString('hex')}`;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `npx leasehold ARGS` as a script runs it: bin/leasehold.mjs in a process of its own (run
 * with node directly), `input` on its stdin, this process's environment with `env` over it;
 * killed after a minute.
 */
export function runCli(args: string[], o: { env?: Record<string, string>; input?: string | Buffer } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin/leasehold.mjs'), ...args], {
      cwd: root,
      env: { ...process.env, LEASEHOLD_LOG: 'warn', ...o.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(o.input ?? '');
  });
}
