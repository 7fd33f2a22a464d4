/**
 * The README's promise, checked on this machine: a fresh clone, `npm ci`, then `npm start`
 * with no DATABASE_URL (so the embedded PostgreSQL) serves the console and completes an
 * enqueued demo.sleep job; SIGTERM stops all of it, the embedded server included. Sign-in
 * is on, as a first-time user gets it: the one-time setup link printed at start creates the
 * first admin, whose session enqueues and reads the job.
 * (npm ci is `npm install` from the lockfile, as CI does.)
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { freePort } from '../../lib/ports';
import { cleanup } from '../cleanup';
import { root, uniquePrefix } from '../processes';
import { waitFor } from '../wait';

test('fresh clone: npm ci && npm start serves the console and completes a demo.sleep job', { timeout: 900_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-clone-'));
  fs.chmodSync(dir, 0o755); // the embedded PostgreSQL runs as the postgres user
  cleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
  execFileSync('git', ['clone', '--quiet', '--no-hardlinks', root, dir]);
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: dir, stdio: 'inherit' });

  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    LEASEHOLD_REDIS_PREFIX: uniquePrefix('clone'),
    LEASEHOLD_LOG: 'info',
  };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  delete env.LEASEHOLD_AUTH; // the default a first-time user gets: sign-in on
  // Its own process group, so the whole tree can be signalled like a terminal would.
  const start = spawn('npm', ['start'], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  start.stdout!.on('data', (d) => (out += d));
  start.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => start.once('exit', (code) => r(code)));
  cleanup(() => {
    try {
      process.kill(-start.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });

  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor('the console to answer', async () => (await fetch(`${base}/api/health`).catch(() => null))?.ok, { timeoutMs: 600_000, intervalMs: 500 });
    await waitFor('the start banner', () => out.includes('Leasehold is running'), { timeoutMs: 30_000 });
    assert.match(out, /postgres\s+embedded PostgreSQL 15/);
    // Closed by default: the console sends a stranger to sign in; the API answers 401.
    const closed = await fetch(base, { redirect: 'manual' });
    assert.equal(closed.status, 307);
    assert.match(closed.headers.get('location') ?? '', /\/signin/);
    assert.equal((await fetch(`${base}/api/jobs`)).status, 401);

    // The first run printed a one-time link for the first admin.
    const link = /(http:\/\/\S+\/setup\?token=[A-Za-z0-9_-]+)/.exec(out)?.[1];
    assert.ok(link, 'the start banner prints the setup link');
    const page = await fetch(link);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Leasehold/);
    const setup = await fetch(`${base}/api/auth/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ token: new URL(link).searchParams.get('token'), name: 'first-admin', password: 'first-admin-password' }),
    });
    assert.equal(setup.status, 201, await setup.clone().text());
    const cookie = setup.headers.get('set-cookie')!.split(';')[0]!;
    const signedIn = { cookie, origin: base };

    const res = await fetch(`${base}/api/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signedIn },
      body: JSON.stringify({ type: 'demo.sleep', payload: { ms: 300 } }),
    });
    assert.equal(res.status, 202);
    const { id } = await res.json();
    const job = await waitFor('the job to complete', async () => {
      const j = await (await fetch(`${base}/api/jobs/${id}`, { headers: signedIn })).json();
      return j.job.status === 'completed' && j;
    });
    assert.equal(job.attempts[0].outcome, 'completed');
  } catch (err) {
    console.error(out.slice(-4000));
    throw err;
  }

  // SIGTERM to npm, as a process manager would send it. npm itself dies of the signal
  // without passing it on; Leasehold notices and stops cleanly all the same.
  start.kill('SIGTERM');
  await exited;
  await waitFor('Leasehold to stop', () => /INFO  stopped role=start/.test(out), { timeoutMs: 60_000 });
  await waitFor('the embedded PostgreSQL to stop', () => !fs.existsSync(path.join(dir, '.leasehold/pg/postmaster.pid')), { timeoutMs: 60_000 });
  await waitFor('no process of the tree left', () => {
    try {
      process.kill(-start.pid!, 0);
      return false;
    } catch {
      return true;
    }
  }, { timeoutMs: 30_000 });
});
