/**
 * The Postgres-only doorbell's receiver (PgReceiver) against a real PostgreSQL: LISTEN on its
 * own connection, NOTIFY from another.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { testDatabase } from '../../test/db';
import { waitFor } from '../../test/wait';
import { startProxy } from '../../test/chaos/proxy';
import { root, tsx } from '../../test/processes';
import { PgReceiver } from './signal';

const db = await testDatabase();

test('a wake-up rung while nobody waits (the worker was claiming) wakes the next wait at once', async (t) => {
  const receiver = new PgReceiver(db.url);
  await receiver.start();
  t.after(() => receiver.close());
  // Connecting wakes too (anything rung while it was away): that wait returns at once.
  await receiver.wait(60_000);
  assert.equal(receiver.pending, false);
  await db.pool.query('NOTIFY leasehold_wakeup');
  await waitFor('the notification to arrive while nobody waits', () => receiver.pending);
  // Dropped, it left this wait to its full minute; a deadline well short of that tells.
  const woke = await Promise.race([
    receiver.wait(60_000).then(() => 'woken' as const),
    new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 20_000).unref()),
  ]);
  assert.equal(woke, 'woken');
  assert.equal(receiver.pending, false, 'used up by that wait');
});

// A worker stopping while its database does not answer (a partition, a frozen server or
// pooler: no FIN, no RST) closed its LISTEN connection by ending it politely and waiting for
// the server's side to close, which never came: the process stayed, all its work done, until
// its supervisor killed it — and, orphaned, for as long as the database stayed silent. The
// receiver runs in a process of its own, which must end by itself once close() returns:
// nothing of the connection may be left holding it open.
test('close() returns while the database does not answer, and lets its connection go: a stopping worker is not held up by it', async () => {
  const url = new URL(db.url);
  const proxy = await startProxy(Number(url.port || 5432), url.hostname);
  url.port = String(proxy.port);
  const script = `
    import { PgReceiver } from ${JSON.stringify(path.join(root, 'lib/queue/signal.ts'))};
    const receiver = new PgReceiver(process.env.T_URL);
    await receiver.start();
    process.once('SIGUSR2', async () => {
      await receiver.close();
      console.log('closed');
    });
    console.log('listening');`;
  const child = spawn(process.execPath, ['--import', tsx, '--input-type=module', '-e', script], { env: { ...process.env, T_URL: url.toString() }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    await waitFor('the LISTEN connection to be made', () => out.includes('listening') && proxy.accepted === 1);
    proxy.cut();
    child.kill('SIGUSR2');
    await waitFor('close() to return', () => out.includes('closed'), { timeoutMs: 30_000 });
    await waitFor('the process to end by itself', () => child.exitCode !== null, { timeoutMs: 30_000 });
    assert.equal(await exited, 0);
  } finally {
    child.kill('SIGKILL');
    proxy.heal();
    await proxy.close();
  }
});

// close() found no connection while one was still being made, and the connection made after
// it was kept, listening, never closed: a Runner stopped during its start held a socket open.
test('close() while the LISTEN connection is still being made: it is ended once made, not kept', async () => {
  const listening = async () =>
    (await db.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'leasehold:listen'`)).rows[0].n as number;
  const receiver = new PgReceiver(db.url);
  const started = receiver.start();
  await receiver.close();
  await started;
  await waitFor('no LISTEN connection left open', async () => (await listening()) === 0, { timeoutMs: 10_000 });
});
