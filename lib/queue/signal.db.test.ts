/**
 * The Postgres-only doorbell's receiver (PgReceiver) against a real PostgreSQL: LISTEN on its
 * own connection, NOTIFY from another.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../../test/db';
import { waitFor } from '../../test/wait';
import { startProxy } from '../../test/chaos/proxy';
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
// its supervisor killed it — and, orphaned, for as long as the database stayed silent.
test('close() returns while the database does not answer: a stopping worker is not held up by its LISTEN connection', async () => {
  const url = new URL(db.url);
  const proxy = await startProxy(Number(url.port || 5432), url.hostname);
  url.port = String(proxy.port);
  const receiver = new PgReceiver(url.toString());
  try {
    await receiver.start();
    await waitFor('the LISTEN connection to be made', () => proxy.accepted === 1);
    proxy.cut();
    const closed = await Promise.race([
      receiver.close().then(() => 'closed' as const),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 20_000).unref()),
    ]);
    assert.equal(closed, 'closed');
  } finally {
    proxy.heal();
    await proxy.close();
  }
});
