/**
 * The saved_views table under a database whose locale folds only ASCII letters (LC_CTYPE=C,
 * as `initdb --locale=C` makes it): names are unique per page whatever their case there too.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';
import { createPool } from '../db/client';
import { runMigrations } from '../db/migrate';
import { cleanup } from '../../test/cleanup';
import { PG_ADMIN_URL, RUN_ID, urlForDb } from '../../test/env';
import { viewList, viewSave } from './store';

async function admin(sql: string) {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

const name = `lh_t_${RUN_ID}_c${randomBytes(4).toString('hex')}`;
await admin(`CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`);
cleanup(() => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
await runMigrations(urlForDb(name));
const pool = createPool(urlForDb(name), { name: 'test', max: 2 });
cleanup(() => pool.end());

test('under LC_CTYPE=C, "Équipe" and "équipe" are one name (409), and views list in case-blind order', async () => {
  await viewSave(pool, { name: 'Équipe', page: 'jobs', query: '', createdBy: null });
  await assert.rejects(viewSave(pool, { name: 'équipe', page: 'jobs', query: 'queue=x', createdBy: null }), /a view named "Équipe" exists on \/jobs/);
  await viewSave(pool, { name: 'émail', page: 'jobs', query: 'queue=mail', createdBy: null });
  await viewSave(pool, { name: 'Zebra', page: 'jobs', query: 'queue=z', createdBy: null });
  await viewSave(pool, { name: 'Ébène', page: 'jobs', query: 'queue=e', createdBy: null });
  assert.deepEqual((await viewList(pool, 'jobs')).map((v) => v.name), ['Zebra', 'Ébène', 'émail', 'Équipe']);
});
