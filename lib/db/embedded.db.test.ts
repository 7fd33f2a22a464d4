/**
 * The embedded PostgreSQL outlives a process killed with SIGKILL (pg_ctl runs it in a
 * session of its own). The next process adopts it and stops it when it ends — unless the
 * process that started it still runs, which keeps it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tsx } from '../../test/processes';
import { waitFor } from '../../test/wait';
import pg from 'pg';
import { canConnect, startEmbeddedPostgres } from './embedded';

const embedded = fileURLToPath(new URL('./embedded.ts', import.meta.url));
const serverPid = (dir: string) => Number(fs.readFileSync(path.join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('a server whose starter was killed is adopted and stopped by the next process; one whose starter runs is left to it', { timeout: 120_000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-embedded-'));
  fs.chmodSync(dir, 0o755); // PostgreSQL runs as the postgres user
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));

  // A starter that is killed with SIGKILL once its server is up.
  const starter = spawn(
    process.execPath,
    ['--import', tsx, '--input-type=module', '-e', `const { startEmbeddedPostgres } = await import(${JSON.stringify(embedded)}); await startEmbeddedPostgres(${JSON.stringify(dir)}); console.log('up'); setInterval(() => {}, 1000);`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    starter.stdout.on('data', (d: Buffer) => d.toString().includes('up') && resolve());
    starter.once('exit', (code) => reject(new Error(`the starter exited (${code}) before its server was up`)));
  });
  const pid = serverPid(dir);
  // Whatever the outcome, no server is left behind (a fast shutdown).
  t.after(() => running(pid) && process.kill(pid, 'SIGINT'));
  starter.kill('SIGKILL');
  await waitFor('the starter to be gone', () => starter.exitCode !== null || starter.signalCode !== null);
  assert.ok(running(pid), 'the server outlived its starter');

  const adopted = await startEmbeddedPostgres(dir);
  t.after(() => adopted.stop().catch(() => {}));
  assert.equal(adopted.owned, true, 'adopted: its starter is gone');
  // While this process runs, another that finds the server leaves it alone.
  const borrowed = await startEmbeddedPostgres(dir);
  assert.equal(borrowed.owned, false);
  await borrowed.stop();
  assert.ok(running(pid), 'a borrower does not stop it');
  // A pid the system gave to another process since is no owner: its start time tells them apart.
  fs.writeFileSync(path.join(dir, 'pg.owner'), `${process.pid} 1`);
  const again = await startEmbeddedPostgres(dir);
  assert.equal(again.owned, true, 'the owner file names a reused pid');
  // No owner file at all (a server an older build started, perhaps still in use): left alone.
  fs.rmSync(path.join(dir, 'pg.owner'));
  assert.equal((await startEmbeddedPostgres(dir)).owned, false);
  await again.stop();
  await waitFor('the adopted server to stop', () => !running(pid));
});


test("a data directory's superuser password is its own, kept readable by this account only; one from before is changed; the port is kept across restarts", { timeout: 180_000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-embedded-'));
  fs.chmodSync(dir, 0o755); // PostgreSQL runs as the postgres user
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const passwordFile = path.join(dir, 'pg.password');

  const first = await startEmbeddedPostgres(dir);
  t.after(() => first.stop().catch(() => {}));
  const password = fs.readFileSync(passwordFile, 'utf8');
  assert.equal(fs.statSync(passwordFile).mode & 0o777, 0o600);
  assert.ok(password.length >= 24 && password !== 'leasehold');
  assert.equal(decodeURIComponent(new URL(first.url).password), password, 'the URL carries it');
  assert.equal(await canConnect(first.port, password), true);
  assert.equal(await canConnect(first.port, 'leasehold'), false, 'the old constant no longer signs in');

  // A data directory from before: the constant password, and no file.
  const c = new pg.Client({ connectionString: first.url });
  await c.connect();
  await c.query(`ALTER ROLE postgres PASSWORD 'leasehold'`);
  await c.end();
  fs.rmSync(passwordFile);
  await first.stop();

  const second = await startEmbeddedPostgres(dir);
  t.after(() => second.stop().catch(() => {}));
  assert.equal(second.port, first.port, 'the port of its last start, free again: a borrower reconnects');
  const changed = fs.readFileSync(passwordFile, 'utf8');
  assert.notEqual(changed, 'leasehold');
  assert.equal(await canConnect(second.port, changed), true);
  assert.equal(await canConnect(second.port, 'leasehold'), false, 'changed at the first start since');
  // A borrower of the running server reads the same password.
  const borrowed = await startEmbeddedPostgres(dir);
  assert.equal(borrowed.url, second.url);

  // A change cut short between ALTER ROLE and the rename: the new password only in pg.password.next.
  const cut = 'cut-short-password-0123456789';
  fs.writeFileSync(`${passwordFile}.next`, cut, { mode: 0o600 });
  const c2 = new pg.Client({ connectionString: second.url });
  await c2.connect();
  await c2.query(`ALTER ROLE postgres PASSWORD '${cut}'`);
  await c2.end();
  await second.stop();
  const third = await startEmbeddedPostgres(dir);
  t.after(() => third.stop().catch(() => {}));
  const now = fs.readFileSync(passwordFile, 'utf8');
  assert.ok(![changed, cut].includes(now), 'signed in with the .next one, then set a new one');
  assert.equal(fs.existsSync(`${passwordFile}.next`), false);
  assert.equal(await canConnect(third.port, now), true);
  await third.stop();
});

test('as root, a data directory the postgres user cannot reach is said in one line, with the ways out', { skip: process.getuid?.() !== 0 && 'only root runs PostgreSQL as another user' }, async (t) => {
  const closed = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-closed-'));
  fs.chmodSync(closed, 0o700); // as /root is
  t.after(() => fs.rmSync(closed, { recursive: true, force: true }));
  await assert.rejects(startEmbeddedPostgres(path.join(closed, 'data')), /runs as the postgres user .* cannot reach the data directory .*DATABASE_URL/);
  assert.equal(fs.existsSync(path.join(closed, 'data', 'pg', 'PG_VERSION')), false, 'no initdb was tried');
});
