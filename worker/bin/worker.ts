/**
 * npm run worker -- --processes P --concurrency C [--queues a,b]
 *
 * Migrates once, then supervises P worker processes with C handlers each. SIGTERM or
 * SIGINT drains them: no new claims, running jobs get LEASEHOLD_SHUTDOWN_GRACE_MS, the
 * rest hand their leases back.
 */
import { Command, InvalidArgumentError } from 'commander';
import type pg from 'pg';
import os from 'node:os';
import type { Config } from '../../lib/config';
import { createPool } from '../../lib/db/client';
import * as ops from '../../lib/queue/ops';
import { createLogger } from '../../lib/log';
import { type Doorbell, PgDoorbell, RedisDoorbell } from '../../lib/queue/signal';
import path from 'node:path';
import { configOrExit, orStopEmbedded, projectRoot, redact, resolveServices, type Services, startFailed } from '../bootstrap';
import { outliveLostOutput } from '../lost-output.mjs';
import { stopsWithParent, watchParent } from '../parent-watch.mjs';
import { EXIT_CONFIG } from '../exit-codes';
import { Supervisor } from '../supervisor';

// Digits only: Number() would also take "0x10", "1e1" or " 5".
export const positiveInt = (max: number) => (v: string) => {
  const n = Number(v);
  if (!/^[0-9]+$/.test(v) || !Number.isInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`expected an integer from 1 to ${max}`);
  return n;
};

export const nonNegativeInt = (max: number) => (v: string) => {
  const n = Number(v);
  if (!/^[0-9]+$/.test(v) || !Number.isInteger(n) || n < 0 || n > max) throw new InvalidArgumentError(`expected an integer from 0 to ${max}`);
  return n;
};

/** --queues: names separated by commas, each trimmed (a queue name has no surrounding spaces); an empty one is refused. */
export const queueList = (v: string) => {
  const names = v.split(',').map((q) => q.trim());
  if (names.some((q) => !q)) throw new InvalidArgumentError('expected queue names separated by commas, none of them empty (e.g. default,mail)');
  return [...new Set(names)].join(',');
};

export interface WorkerCommandOptions {
  processes: number;
  concurrency: number;
  queues: string;
  prefetch: number;
}

export function addWorkerOptions(cmd: Command) {
  return cmd
    .option('-p, --processes <n>', 'worker processes', positiveInt(64), 2)
    .option('-c, --concurrency <n>', 'handlers running at once in each process', positiveInt(1000), 10)
    .option('-q, --queues <list>', 'comma-separated queues to take jobs from', queueList, 'default')
    .option('--prefetch <n>', 'jobs claimed ahead of free slots, held under renewed leases (batches claims)', nonNegativeInt(10_000), 0);
}

/**
 * The options as this command's own arguments: what `npm start` passes to the supervisor it
 * forks. Every option, so one added here cannot be taken at `npm start` and dropped on the
 * way (--prefetch was).
 */
export function workerCommandArgs(opts: WorkerCommandOptions): string[] {
  return ['--processes', String(opts.processes), ...processArgs(opts)];
}

/** The options each worker process takes (worker/process.ts): all but how many processes. */
function processArgs(opts: WorkerCommandOptions): string[] {
  const args = ['--concurrency', String(opts.concurrency), '--queues', opts.queues];
  if (opts.prefetch) args.push('--prefetch', String(opts.prefetch));
  return args;
}

/**
 * Paths the child processes need, made absolute: resolved from the project's directory (as
 * the console resolves them), while the worker processes run in the directory this command
 * was started from (where a handler's relative paths point).
 */
export function childEnv(cfg: Config): Record<string, string> {
  const env: Record<string, string> = {
    LEASEHOLD_RESULTS_DIR: path.resolve(projectRoot, cfg.resultsDir ?? path.join(cfg.dataDir, 'results')),
  };
  if (cfg.handlersModule) env.LEASEHOLD_HANDLERS = path.resolve(cfg.handlersModule);
  return env;
}

/** How the attempt of a job released by the supervisor is recorded (`aborted`). */
export const HELD_BY_A_DEAD_PROCESS = 'claimed ahead; its worker process ended before it started';

export async function runWorkers(opts: WorkerCommandOptions) {
  const log = createLogger({ role: 'supervisor' });
  outliveLostOutput();
  const cfg = configOrExit();
  // The signal handlers first, as in start.ts and web.ts: a Ctrl-C while the embedded server
  // starts or the migrations run stops that server too (it runs in a session of its own).
  let servicesReady: Promise<Services> | null = null;
  let supervisor: Supervisor | null = null;
  let pool: pg.Pool | null = null;
  let doorbell: Doorbell | null = null;
  let stopping = false;
  const stop = async (sig: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping workers', { signal: sig });
    await supervisor?.stop(cfg.shutdownGraceMs + 10_000);
    await doorbell?.close?.().catch(() => {});
    await pool?.end().catch(() => {});
    await (await servicesReady?.catch(() => null))?.embedded?.stop();
    process.exit(exitCode);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A terminal that hangs up (an SSH session that drops) sends SIGHUP: drained too, not ended at once.
  process.on('SIGHUP', () => void stop('SIGHUP'));

  // A start that cannot go on (the database unreachable, a migration refused) is one line and
  // exit 1, the embedded server this process started stopped first.
  servicesReady = resolveServices(cfg, log);
  const services = await servicesReady.catch((err) => startFailed(log, err));
  // The migrator loaded here, not at the top: the command line imports this module for every
  // verb, and drizzle is about 200 modules only this start needs.
  await orStopEmbedded(services, async () => (await import('../../lib/db/migrate')).runMigrations(services.databaseUrl)).catch((err) => startFailed(log, err));
  if (stopping) await new Promise(() => {}); // stop() ends the process
  const args = processArgs(opts);
  // One connection, for recording the processes that die (the console then stops counting
  // them alive); the workers do everything else. A record not written within 10 s is given up
  // (the leases run out instead): the stop waits for it, and must not wait on a silent connection.
  const db = createPool(services.databaseUrl, { name: 'supervisor', max: 1, queryTimeoutMs: 10_000 });
  pool = db;
  const host = os.hostname();
  // For the held jobs it gives back (below). Connected now, not at the first release: that
  // ring must not wait for a connection while the dead process's replacement starts, nor
  // hold up the record of its death (onDied waits for it).
  const ring: Doorbell = services.redisUrl ? new RedisDoorbell(services.redisUrl, cfg.redisPrefix, db, log) : new PgDoorbell(db, log);
  doorbell = ring;
  const kept = new Supervisor({
    processes: opts.processes,
    args,
    env: { ...process.env, ...childEnv(cfg), DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl ?? 'off' },
    log,
    // Two leases: by then the process has lost every lease it held (its heartbeats could not
    // run); and never under 10 s, far above the 500 ms beat and a GC pause, however short the lease.
    stallKillMs: Math.max(2 * cfg.leaseMs, 10_000),
    onDied: (pid, exit, workerId) =>
      ops
        .workerDied(db, { host, pid, exit, workerId })
        .then((r) => r.leasesEnded && log.info("a dead worker process's leases ended early; the recover sweep takes its jobs", { pid, worker: r.workerId, leases: r.leasesEnded }))
        .catch((err) => log.warn('could not record a dead worker process', { pid, err })),
    // Jobs a process held claimed ahead and never started: their attempts back, before the
    // leases end (onDied), and rung at the front of their lists, as a worker's own hand-back
    // is (the oldest waiting): a replacement or a peer takes them at once, not at its next poll.
    onHeld: ({ workerId, leases }) =>
      ops
        .jobRelease(db, { workerId, leases, reason: HELD_BY_A_DEAD_PROCESS, unstarted: true, doorbell: ring })
        .then((r) => r.length && log.info('jobs a worker process held claimed ahead, never started, are queued again with their attempts back', { worker: workerId, jobs: r.length }))
        .catch((err) => log.warn('could not give back the jobs a worker process held claimed ahead; their leases run out instead', { worker: workerId, err })),
    // Every process would refuse the same module: stop them all, and exit with the code.
    onRefused: () => void stop('a worker process refused its configuration', EXIT_CONFIG),
  });
  supervisor = kept;
  // SIGTSTP quiets every process, as the workers page's Quiet does (Sidekiq's TSTP): before a
  // deploy, send it, wait for the jobs in hand, then SIGTERM. Only for a supervisor run by a
  // process manager or a script (one that forks it with a channel too, as pm2 does): under
  // `npm start` (which says so, LEASEHOLD_UNDER_START) or in a terminal, Ctrl-Z sends SIGTSTP
  // to every process of the job, and there it suspends them all, as it always has, rather
  // than leave the workers quiet after `fg`.
  if (!process.env.LEASEHOLD_UNDER_START && !process.stdin.isTTY) {
    process.on('SIGTSTP', () => {
      log.info('SIGTSTP: quieting every worker process (Resume on the workers page undoes it)');
      kept.quietAll(`SIGTSTP to pid ${process.pid}`);
    });
  }
  // Only now: "workers started" says the handlers above are in place (a SIGTSTP sent on
  // reading it, before its handler, would have stopped this process instead).
  kept.start();
  log.info('workers started', {
    processes: opts.processes,
    concurrency: opts.concurrency,
    queues: opts.queues,
    nice: cfg.workerNice,
    postgres: redact(services.databaseUrl),
    redis: services.redisUrl ?? 'none (PostgreSQL-only claiming)',
  });
  // Started by `npm start` (start.ts forks us) or by npm/npx, which then died: drain rather
  // than run on as an orphan. Under nohup or a process manager, a parent's exit is no stop.
  if (stopsWithParent()) watchParent(() => void stop('parent process exited'));
  return kept;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const program = addWorkerOptions(new Command('worker'))
    .description('Run Leasehold worker processes under a supervisor.')
    .action(async (opts: WorkerCommandOptions) => {
      await runWorkers(opts);
    });
  await program.parseAsync();
}
