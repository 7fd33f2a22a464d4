/**
 * A fresh, migrated database per test file (cloned from the template that
 * test/global-setup.ts migrates), dropped when the file's tests end. Call it at the top
 * level of a test file (top-level await), so its cleanup runs after all of the file's tests.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPool } from '../lib/db/client';
import { runMigrations } from '../lib/db/migrate';
import { cleanup } from './cleanup';
import { PG_ADMIN_URL, RUN_ID, TEMPLATE_DB, urlForDb } from './env';

export interface TestDb {
  name: string;
  url: string;
  pool: pg.Pool;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  c.on('error', () => {});
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function testDatabase(): Promise<TestDb> {
  const name = `lh_t_${RUN_ID}_${randomBytes(4).toString('hex')}`;
  const fromTemplate = await admin(async (c) => {
    try {
      await c.query(`CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE_DB}"`);
      return true;
    } catch {
      await c.query(`CREATE DATABASE "${name}"`);
      return false;
    }
  });
  const url = urlForDb(name);
  if (!fromTemplate) await runMigrations(url); // run without test/global-setup.ts
  const pool = createPool(url, { name: 'test', max: 30 });
  cleanup(async () => {
    await pool.end().catch(() => {});
    await admin(async (c) => {
      // A pool's end() resolves once its connections are let go, before each has closed: one
      // FORCE terminates while it still closes errors in the test's process after its tests
      // (a CI run failed a file that passed every test so). Wait for them to close first;
      // what is still open after that is a leak, and FORCE ends it.
      const deadline = Date.now() + 3_000;
      while (Date.now() < deadline) {
        const { rows } = await c.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`, [name]);
        if (rows[0].n === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }).catch(() => {});
  });
  return { name, url, pool };
}

/** An empty database (not the migrated template: no table at all), dropped when the file's tests end. */
export async function emptyDatabase(what: string): Promise<string> {
  const name = `lh_t_${RUN_ID}_${what}_${randomBytes(3).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  cleanup(() => admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => {}));
  return urlForDb(name);
}
