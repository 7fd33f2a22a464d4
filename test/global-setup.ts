/**
 * Run once before the database tests: migrate a template database that each test file
 * clones (CREATE DATABASE ... TEMPLATE is a file copy: milliseconds), and drop databases
 * left behind by an interrupted earlier run.
 */
import pg from 'pg';
import { runMigrations } from '../lib/db/migrate';
import { PG_ADMIN_URL, TEMPLATE_DB, urlForDb } from './env';

const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
await admin.connect();
const stale = await admin.query(
  `SELECT datname FROM pg_database WHERE datname LIKE 'lh\\_t\\_%' OR datname = $1`,
  [TEMPLATE_DB],
);
for (const { datname } of stale.rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
await admin.query(`CREATE DATABASE "${TEMPLATE_DB}"`);
await admin.end();
await runMigrations(urlForDb(TEMPLATE_DB));
console.log(`template database ${TEMPLATE_DB} migrated`);
