import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import pg from 'pg';
import { emptyDatabase } from '../../test/db';
import { CONNECT_TIMEOUT_MS } from './client';
import { ATTEMPT_OUTCOME_VALUES, JOB_STATUS_VALUES } from './enums';
import { runMigrations, serverTooOld } from './migrate';

test('four processes migrating one fresh database at once all succeed', async () => {
  const url = await emptyDatabase('mig');
  const results = await Promise.allSettled(Array.from({ length: 4 }, () => runMigrations(url)));
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
  const c = new pg.Client(url);
  await c.connect();
  const { rows } = await c.query(`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`);
  const { rows: t } = await c.query(`SELECT to_regclass('jobs') IS NOT NULL AND to_regclass('job_attempts') IS NOT NULL AND to_regclass('workers') IS NOT NULL AS ok`);
  await c.end();
  assert.ok(rows[0].n >= 3);
  assert.equal(t[0].ok, true);
});

/** A fresh database, migrated, and a client on it for `use` (ended after it). */
async function onMigrated(what: string, use: (c: pg.Client, url: string) => Promise<void>) {
  const url = await emptyDatabase(what);
  await runMigrations(url);
  const c = new pg.Client(url);
  await c.connect();
  try {
    await use(c, url);
  } finally {
    await c.end();
  }
}

test("the migrated enums hold exactly the values the code declares them with (lib/db/enums.ts), in order", async () => {
  await onMigrated('mig-enums', async (c) => {
    const values = async (type: string) => (await c.query(`SELECT unnest(enum_range(NULL::${type}))::text AS v`)).rows.map((r) => r.v);
    assert.deepEqual(await values('job_status'), [...JOB_STATUS_VALUES]);
    assert.deepEqual(await values('attempt_outcome'), [...ATTEMPT_OUTCOME_VALUES]);
  });
});

test('a server older than PostgreSQL 14 is refused with the reason (this one, the real one, is not)', async () => {
  assert.match(serverTooOld(130_016, '13.16') ?? '', /PostgreSQL 13\.16 is too old: Leasehold needs PostgreSQL 14 or newer/);
  assert.equal(serverTooOld(140_000, '14.0'), null);
  const c = new pg.Client(await emptyDatabase('mig'));
  await c.connect();
  const { rows } = await c.query(`SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS v`);
  await c.end();
  assert.equal(serverTooOld(rows[0].num, rows[0].v), null);
});

test('a database a newer build migrated is refused, with nothing applied', async () => {
  await onMigrated('mig', async (c, url) => {
    // What a later release's migration leaves: a row newer than any this build knows.
    await c.query(`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('from-a-newer-build', $1)`, [Date.now() + 365 * 86_400_000]);
    await assert.rejects(runMigrations(url), (e: Error & { code?: string }) => e.code === 'unavailable' && /migrated by a newer Leasehold/.test(e.message));
    assert.equal((await c.query(`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations WHERE hash = 'from-a-newer-build'`)).rows[0].n, 1);
  });
});

test("no migration after 0032 names the enum value it adds ('snoozed'): all pending migrations run in one transaction, where a new value cannot be used", async () => {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const dir = path.join(import.meta.dirname, '../../drizzle');
  const later = fs.readdirSync(dir).filter((f) => /^\d{4}_.*\.sql$/.test(f) && Number(f.slice(0, 4)) > 32);
  for (const f of later) assert.doesNotMatch(fs.readFileSync(path.join(dir, f), 'utf8'), /'snoozed'/, `${f} uses 'snoozed': apply it in a migration run of its own`);
});

test('a server that accepts the connection and never answers is given up on, with why, not waited for for ever', { timeout: 60_000 }, async () => {
  const silent = net.createServer(() => {}); // accepts, never answers
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  try {
    const port = (silent.address() as net.AddressInfo).port;
    const started = Date.now();
    await assert.rejects(runMigrations(`postgres://postgres@127.0.0.1:${port}/nothing`), /timeout/i);
    assert.ok(Date.now() - started >= CONNECT_TIMEOUT_MS - 1_000, 'it waited for the connection as long as a pool does');
  } finally {
    silent.close();
  }
});
