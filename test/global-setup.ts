/**
 * Run once before the database tests: migrate a template database that each test file
 * clones (CREATE DATABASE ... TEMPLATE is a file copy: milliseconds). test/run.sh drops
 * this run's databases when it ends (test/cleanup-dbs.ts).
 */
import pg from 'pg';
import { runMigrations } from '../lib/db/migrate';
import { PG_ADMIN_URL, TEMPLATE_DB, urlForDb } from './env';

const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS "${TEMPLATE_DB}" WITH (FORCE)`);
await admin.query(`CREATE DATABASE "${TEMPLATE_DB}"`);
await admin.end();
await runMigrations(urlForDb(TEMPLATE_DB));
console.log(`template database ${TEMPLATE_DB} migrated`);
