/**
 * The console's process: `next start`, built first when the sources are newer than the
 * last build. Started with `node` directly (an npx wrapper would orphan its child).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { probePort } from '../lib/ports';
import { runMigrations } from '../lib/db/migrate';
import type { Logger } from '../lib/log';
import { orStopEmbedded, projectRoot, type Services, startFailed } from './bootstrap';

const nextBin = path.join(projectRoot, 'node_modules/next/dist/bin/next');
/** Answers undecodable paths with a 400 before Next's router fails on them with a 500 (see the file). */
const httpGuard = path.join(projectRoot, 'worker/http-guard.mjs');
const SOURCES = ['app', 'components', 'lib', 'public', 'instrumentation.ts', 'proxy.ts', 'next.config.ts', 'package.json', 'postcss.config.mjs', 'tsconfig.json'];

function newestMtime(p: string): number {
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return /\.test\.tsx?$/.test(p) ? 0 : st.mtimeMs;
  let newest = 0;
  for (const e of fs.readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, e)));
  return newest;
}

const buildIdFile = () => path.join(projectRoot, '.next/BUILD_ID');

export function buildIsStale(): boolean {
  const buildId = buildIdFile();
  if (!fs.existsSync(buildId)) return true;
  const built = fs.statSync(buildId).mtimeMs;
  return SOURCES.some((s) => newestMtime(path.join(projectRoot, s)) > built);
}

/** Builds the console if needed (first start, or sources changed). */
export function ensureBuild(log: Logger) {
  if (!buildIsStale()) return;
  log.info('building the console (first start or changed sources; takes about a minute on 2 cores)');
  const startedAt = new Date();
  const r = spawnSync(process.execPath, [nextBin, 'build'], {
    cwd: projectRoot,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
  // Ctrl-C reaches the build too (the whole process group): a stop asked for, not a failure.
  if (r.signal === 'SIGINT' || r.signal === 'SIGTERM' || r.status === 130 || r.status === 143) throw new BuildInterrupted();
  if (r.status !== 0) throw new Error(`next build failed (exit ${r.status})`);
  // Dated from the build's start, not its end: a source saved while it ran (which it may not
  // have read) is then newer than the build, and the next start builds again. Dated from its
  // end, that change was never built until another one came.
  fs.utimesSync(buildIdFile(), startedAt, startedAt);
}

class BuildInterrupted extends Error {
  constructor() {
    super('stopped during the console build');
  }
}

export function spawnWeb(opts: { port: number; host: string; env: NodeJS.ProcessEnv }): ChildProcess {
  return spawn(process.execPath, ['--import', httpGuard, nextBin, 'start', '-p', String(opts.port), '-H', opts.host], {
    cwd: projectRoot,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...opts.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
}

/**
 * Refuses a port something already listens on, before the console is spawned: Next.js
 * would fail to bind and be restarted with a growing back-off for ever, while whoever
 * holds the port — another console, on another database — answered for it.
 */
export async function assertPortFree(port: number, host: string): Promise<void> {
  const err = await probePort(port, host);
  if (err) throw err.code === 'EADDRINUSE' ? new Error(`port ${port} on ${host} is in use: stop what holds it, or set PORT`) : err;
}

/**
 * What npm start and npm run web do before the console runs, on the services being
 * resolved: migrations, a free port (before the build: a taken one is known at once), the
 * build. A failure is one line and exit 1, the embedded server this process started
 * stopped first. No build once `stopping()`: a signal came, the caller is shutting down.
 */
export async function prepareConsole(
  servicesReady: Promise<Services>,
  o: { port: number; host: string; log: Logger; stopping: () => boolean },
): Promise<Services> {
  const services = await servicesReady.catch((err) => startFailed(o.log, err));
  await orStopEmbedded(services, async () => {
    await runMigrations(services.databaseUrl);
    await assertPortFree(o.port, o.host);
    if (!o.stopping()) ensureBuild(o.log);
  }).catch((err) => {
    if (!(err instanceof BuildInterrupted)) startFailed(o.log, err);
    o.log.info('stopped during the console build (it builds again at the next start)');
    process.exit(130);
  });
  return services;
}

/** Resolves once GET url answers 200 (or rejects after timeoutMs). */
export async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
