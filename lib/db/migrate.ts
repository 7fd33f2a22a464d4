/**
 * Applies the committed drizzle-kit migrations (drizzle/). Safe when several processes
 * start at once: drizzle's migrator has no lock of its own, so it runs under a
 * PostgreSQL advisory lock and the second process finds everything applied.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';

const MIGRATION_LOCK = 724_301;

export const migrationsFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../drizzle');

export async function runMigrations(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString, application_name: 'leasehold:migrate' });
  client.on('error', () => {});
  await client.connect();
  try {
    // Notices such as "schema drizzle already exists, skipping" are noise here.
    await client.query(`SET client_min_messages = warning`);
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migrate(drizzle(client), { migrationsFolder });
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    await client.end().catch(() => {});
  }
}
