/** Drops the databases of this test run (named after TEST_RUN_ID, see test/env.ts). */
import pg from 'pg';
import { PG_ADMIN_URL, RUN_ID } from './env';

const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
await admin.connect();
const { rows } = await admin.query(
  `SELECT datname FROM pg_database WHERE datname ~ $1`,
  [`^lh_(t|tpl|e2e)_${RUN_ID}(_|$)`],
);
for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
await admin.end();
