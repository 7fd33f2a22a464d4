/** Before the browser tests: a fresh database for them, and a console build that matches the sources. */
import pg from 'pg';
import { runMigrations } from '../../lib/db/migrate';
import { createLogger } from '../../lib/log';
import { ensureBuild } from '../../worker/web';
import { PG_ADMIN_URL } from '../env';
import { E2E_DB, e2eDatabaseUrl } from './env';

const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS "${E2E_DB}" WITH (FORCE)`);
await admin.query(`CREATE DATABASE "${E2E_DB}"`);
await admin.end();
await runMigrations(e2eDatabaseUrl());
ensureBuild(createLogger({ role: 'e2e' }));
