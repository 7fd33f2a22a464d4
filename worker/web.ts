/**
 * The console's process: `next start`, built first when the sources are newer than the
 * last build. Started with `node` directly (an npx wrapper would orphan its child).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
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

/**
 * Builds take turns: two starts on one checkout (two installations, or a start beside a
 * running one after an update) both found the build stale, and Next refuses a second build
 * while one runs ("Another next build process is already running"), so the second start
 * failed. The turn is a directory (mkdir is atomic) holding its builder's pid, outside the
 * project (nothing to ignore in git); one whose builder is gone (killed mid-build) is taken
 * over. After waiting, the build is usually fresh, and is not made again.
 */
export async function ensureBuildInTurn(log: Logger, stopping: () => boolean) {
  if (!buildIsStale()) return;
  const release = await takeBuildTurn(buildLockDir(), log, stopping);
  try {
    ensureBuild(log);
  } finally {
    release();
  }
}

/** Waits for the build's turn (see ensureBuildInTurn); resolves to its release. */
export async function takeBuildTurn(lockDir: string, log: Logger, stopping: () => boolean): Promise<() => void> {
  let told = false;
  for (;;) {
    if (stopping()) throw new BuildInterrupted();
    try {
      fs.mkdirSync(lockDir);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = lockHolder(lockDir);
    if (holder === 'gone') {
      fs.rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!told) log.info('waiting for another start to finish building the console', { pid: holder });
    told = true;
    await new Promise((r) => setTimeout(r, 250));
  }
  fs.writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
  return () => fs.rmSync(lockDir, { recursive: true, force: true });
}

/** One lock per checkout, in the system's temporary directory. */
const buildLockDir = () =>
  path.join(os.tmpdir(), `leasehold-build-${createHash('sha256').update(projectRoot).digest('hex').slice(0, 16)}.lock`);

/** The pid building now, 'gone' when it has died, or null while it has not yet written its pid. */
function lockHolder(lockDir: string): number | 'gone' | null {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(lockDir, 'pid'), 'utf8'));
  } catch {
    // Just made, its pid not yet written (or a lock left by a crash in that instant: a
    // minute on, it is taken over).
    const age = Date.now() - (fs.statSync(lockDir, { throwIfNoEntry: false })?.mtimeMs ?? 0);
    return age > 60_000 ? 'gone' : null;
  }
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : 'gone';
  }
}

export class BuildInterrupted extends Error {
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
    await ensureBuildInTurn(o.log, o.stopping);
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
