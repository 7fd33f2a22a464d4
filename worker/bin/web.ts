/** npm run web — the console only (migrates and builds first when needed). */
import type { ChildProcess } from 'node:child_process';
import { createLogger } from '../../lib/log';
import { configOrExit, redact, resolveServices, type Services } from '../bootstrap';
import { outliveLostOutput } from '../lost-output.mjs';
import { stopsWithParent, watchParent } from '../parent-watch.mjs';
import { prepareConsole, spawnWeb } from '../web';
import { childEnv } from './worker';

const log = createLogger({ role: 'web' });
outliveLostOutput(); // its log lines must not end it before it stops the embedded server
const cfg = configOrExit();
const host = process.env.HOST ?? '127.0.0.1';
let child: ChildProcess | null = null;
let stopping = false;
// Handlers first, as in start.ts: a signal while the embedded server starts or the console
// builds stops that server too.
// (Assigned after the handlers: starting the embedded server runs initdb and pg_ctl synchronously.)
let servicesReady: Promise<Services> | null = null;
const stop = async (exitCode = 0) => {
  if (stopping) return;
  stopping = true;
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await (await servicesReady?.catch(() => null))?.embedded?.stop();
  process.exit(exitCode);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
process.on('SIGHUP', () => void stop()); // a terminal that hangs up: the embedded server is stopped too
// npm does not pass SIGTERM on (see start.ts): when npm goes away, stop.
if (stopsWithParent()) watchParent(() => void stop());

servicesReady = resolveServices(cfg, log);
const services = await prepareConsole(servicesReady, { port: cfg.port, host, log, stopping: () => stopping });
if (stopping) await new Promise(() => {}); // stop() ends the process
child = spawnWeb({
  port: cfg.port,
  host,
  env: { ...process.env, ...childEnv(cfg), DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl ?? 'off' },
});
log.info('console starting', { url: `http://${host}:${cfg.port}`, postgres: redact(services.databaseUrl), redis: services.redisUrl ?? 'none' });
child.on('exit', (code, signal) => {
  if (stopping) return; // stop() takes it from here
  // A Ctrl-C (or a terminal's hangup) reaches the console too (same process group), often
  // before our own handler.
  const interrupted = signal === 'SIGINT' || signal === 'SIGTERM' || signal === 'SIGHUP' || code === 130 || code === 143 || code === 129;
  if (interrupted) log.info('console stopped', { code, signal });
  else log.warn('console exited', { code, signal });
  void stop(interrupted ? 0 : (code ?? 1));
});
