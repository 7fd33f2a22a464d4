/**
 * npm start — everything on one machine: PostgreSQL (DATABASE_URL, or an embedded server
 * with data under .leasehold/), Redis (REDIS_URL, or the local one if it answers, or
 * none), migrations, the console and the workers.
 *
 * The console and the worker supervisor are separate processes under this one, so a
 * handler that crashes its process never takes the console down. SIGTERM or SIGINT stops
 * all of it cleanly: workers drain, the console exits, the embedded server shuts down.
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import { Command } from 'commander';
import { createLogger } from '../../lib/log';
import { createPool } from '../../lib/db/client';
import { setupTokenCreate, userCount } from '../../lib/auth/store';
import { configOrExit, projectRoot, redact, resolveServices, type Services, tsxImport } from '../bootstrap';
import { outliveLostOutput } from '../lost-output.mjs';
import { stopsWithParent, watchParent } from '../parent-watch.mjs';
import { keepAlive } from '../keep-alive';
import { EXIT_CONFIG } from '../exit-codes';
import { redisAnswers, redisBanner } from '../../lib/redis-url';
import { prepareConsole, spawnWeb, waitForHttp } from '../web';
import { addWorkerOptions, childEnv, type WorkerCommandOptions, workerCommandArgs } from './worker';

const program = addWorkerOptions(new Command('start'))
  .description('Run the Leasehold console and workers (and an embedded PostgreSQL when DATABASE_URL is unset).')
  .option('--no-worker', 'run the console only')
  .parse();
const opts = program.opts<WorkerCommandOptions & { worker: boolean }>();

const log = createLogger({ role: 'start' });
outliveLostOutput();
const cfg = configOrExit();
const host = process.env.HOST ?? '127.0.0.1';
let stopping = false;
let web: { stop: () => Promise<void> } | null = null;
let workers: { stop: () => Promise<void> } | null = null;
// The signal handlers come first, before anything is awaited: a Ctrl-C while the embedded
// server starts or the console builds (the first start's longest minute) must stop that
// server too. pg_ctl runs it in a session of its own, so the Ctrl-C never reaches it.
// (Assigned after the handlers: starting the embedded server runs initdb and pg_ctl synchronously.)
let servicesReady: Promise<Services> | null = null;
async function shutdown(signal: string, exitCode = 0) {
  if (stopping) return;
  stopping = true;
  log.info('stopping Leasehold', { signal });
  await Promise.all([web?.stop(), workers?.stop()]);
  await (await servicesReady?.catch(() => null))?.embedded?.stop();
  log.info('stopped');
  process.exit(exitCode);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
// A terminal that hangs up sends SIGHUP to every process of the job: Node's default would
// end this one at once, the embedded server left running.
process.on('SIGHUP', () => void shutdown('SIGHUP'));
// `npm start` does not pass SIGTERM on: npm exits and leaves us running. When npm goes away
// like that, stop as if we had been sent the signal ourselves (not when a shell or nohup
// started us: stopsWithParent).
if (stopsWithParent()) watchParent(() => void shutdown('parent process exited'));

servicesReady = resolveServices(cfg, log);
const services = await prepareConsole(servicesReady, { port: cfg.port, host, log, stopping: () => stopping });
if (stopping) await new Promise(() => {}); // shutdown() ends the process

const env = { ...process.env, ...childEnv(cfg), DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl ?? 'off' };

web = keepAlive('console', () => spawnWeb({ port: cfg.port, host, env }), { log });
workers = opts.worker
  ? keepAlive('worker supervisor', () =>
      fork(
        path.join(projectRoot, 'worker/bin/worker.ts'),
        workerCommandArgs(opts),
        // LEASEHOLD_UNDER_START: Ctrl-Z suspends it with the rest (worker/bin/worker.ts, SIGTSTP).
        { execArgv: ['--import', tsxImport], env: { ...env, LEASEHOLD_UNDER_START: '1' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
      ),
    {
      log,
      // Its handlers module cannot be used: everything stops, with the code, rather than a
      // console beside workers that never run (the reason is in the worker's log line).
      finalCode: EXIT_CONFIG,
      onFinal: () => void shutdown('the workers refused their handlers module', EXIT_CONFIG),
    })
  : null;


const consoleUrl = `http://${host === '0.0.0.0' ? 'localhost' : host}:${cfg.port}`;
const consoleUp = await waitForHttp(`${consoleUrl}/api/health`, 60_000).then(
  () => true,
  (e) => (log.error('the console did not come up: the workers run on; see its log above', { err: e }), false),
);
// REDIS_URL set to a server that is down is kept (the workers return to it), but not printed as in use.
// (A rediss:// one is not asked: the check speaks plain TCP.)
const redisAnswering = !!services.redisUrl && (services.redisUrl.startsWith('rediss:') || (await redisAnswers(services.redisUrl)));
const lines = [
  '',
  consoleUp ? `  Leasehold is running` : `  Leasehold is running WITHOUT its console (it did not answer within 60 s)`,
  `  console     ${consoleUrl}`,
  // The embedded server listens on 127.0.0.1 only, with a password made for its data directory
  // (lib/db/embedded.ts): its URL is printed whole, to this terminal, for your own producers.
  `  postgres    ${services.embedded ? `embedded PostgreSQL 15, data in ${services.embedded.dataDir} (${services.databaseUrl})` : redact(services.databaseUrl)}`,
  // The key prefix too: two installations sharing one Redis must not share it.
  `  redis       ${redisBanner(services.redisUrl && redact(services.redisUrl), cfg.redisPrefix, redisAnswering)}`,
  `  workers     ${opts.worker ? `${opts.processes} process${opts.processes === 1 ? '' : 'es'} × ${opts.concurrency} concurrent jobs, queues ${opts.queues}` : 'not started (--no-worker)'}`,
  `  lease       ${cfg.leaseMs} ms, renewed every ${cfg.heartbeatMs} ms`,
  '',
];
const authOff = (process.env.LEASEHOLD_AUTH ?? '').trim().toLowerCase() === 'off';
if (authOff) {
  lines.push(
    '  !!! AUTH OFF  LEASEHOLD_AUTH=off: sign-in is disabled. Anyone who can reach this port can read and',
    '  !!!           change every job. For local demos and tests only.',
    '',
  );
} else {
  // No operators yet: a one-time link lets the first admin choose a password (the two-command start keeps working).
  const pool = createPool(services.databaseUrl, { name: 'start', max: 1 });
  try {
    if ((await userCount(pool)) === 0) {
      const token = await setupTokenCreate(pool);
      lines.push(
        '  sign-in     no operators yet. Create the first admin (link valid 24 h, works once):',
        `              ${consoleUrl}/setup?token=${token}`,
        '              or: npx leasehold user add NAME --role admin',
        '',
      );
    } else {
      lines.push(`  sign-in     ${consoleUrl}/signin (operators: npx leasehold user list)`, '');
    }
  } finally {
    await pool.end();
  }
}
process.stdout.write(lines.join('\n') + '\n');
