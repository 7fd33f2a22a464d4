/**
 * Applies the committed drizzle-kit migrations (drizzle/). Safe when several processes
 * start at once: drizzle's migrator has no lock of its own, so it runs under a
 * PostgreSQL advisory lock and the second process finds everything applied.
 *
 * A database a newer build migrated is refused: drizzle's migrator only applies what is
 * newer than the database's last migration and says nothing of one it does not know, so
 * after a rollback the old code ran against a schema it was not written for (a renamed
 * column left jobs running for good while every sweep failed).
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { log } from '../log';
import { QueueError } from '../queue/errors';
import { CONNECT_TIMEOUT_MS } from './client';
import { migrationsFolder, newerSchemaText, newestAppliedMigration } from './schema-version';

const MIGRATION_LOCK = 724_301;

/**
 * PostgreSQL 14 is the oldest server Leasehold runs on: the recover sweep's session sets
 * `idle_session_timeout` (new in 14), so on 13 every sweep failed, and jobs whose lease ran
 * out with no attempts left (which only the sweep ends) stayed `running` for good.
 */
export const OLDEST_SERVER = 140_000;

/** Why this server is refused (`server_version_num`), or null. */
export function serverTooOld(versionNum: number, version: string): string | null {
  return versionNum >= OLDEST_SERVER
    ? null
    : `PostgreSQL ${version} is too old: Leasehold needs PostgreSQL 14 or newer (the recover sweep uses idle_session_timeout)`;
}

export async function runMigrations(connectionString: string): Promise<void> {
  // Given up after CONNECT_TIMEOUT_MS, as every pool's connection is: with no limit (pg's
  // default) `npm start` and `leasehold migrate` waited for ever on a server that accepted
  // the connection and never answered.
  const client = new pg.Client({ connectionString, application_name: 'leasehold:migrate', connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => {});
  await client.connect();
  try {
    const server = (await client.query(`SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS version`)).rows[0];
    const tooOld = serverTooOld(server.num, server.version);
    if (tooOld) throw new QueueError('unavailable', tooOld);
    // Notices such as "schema drizzle already exists, skipping" are noise here.
    await client.query(`SET client_min_messages = warning`);
    if (!(await client.query('SELECT pg_try_advisory_lock($1) AS got', [MIGRATION_LOCK])).rows[0].got) {
      log.info('waiting for another process to finish migrating the database');
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    }
    const newer = newerSchemaText(await newestAppliedMigration(client));
    if (newer) throw new QueueError('unavailable', newer);
    await migrate(drizzle(client), { migrationsFolder });
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    await client.end().catch(() => {});
  }
}
