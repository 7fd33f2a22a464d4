/**
 * Whether a database's schema is the one this build was written for: the newest migration
 * drizzle recorded in it against this build's journal. Without drizzle (the command line
 * loads this for every verb; drizzle's migrator is loaded only where migrations run).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NOT_MIGRATED } from '../queue/errors';
import type { Executor } from './client';

export const migrationsFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../drizzle');

/** When this build's newest migration was made (drizzle's journal, as recorded in the database). */
export function newestKnownMigration(): number {
  const journal = JSON.parse(fs.readFileSync(path.join(migrationsFolder, 'meta/_journal.json'), 'utf8')) as { entries: { when: number }[] };
  return Math.max(...journal.entries.map((e) => e.when));
}

/** When the database's newest migration was made, or null when none is recorded (never migrated). */
export async function newestAppliedMigration(db: Executor): Promise<number | null> {
  // (Two statements: a statement naming a table that does not exist yet fails to parse.)
  const table = (await db.query(`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS exists`)).rows[0].exists;
  if (!table) return null;
  const newest = (await db.query(`SELECT max(created_at)::float8 AS newest FROM drizzle.__drizzle_migrations`)).rows[0].newest;
  return newest === null ? null : Number(newest);
}

/** Why a build refuses a database a newer build migrated, or null. */
export function newerSchemaText(applied: number | null, known = newestKnownMigration()): string | null {
  return applied !== null && applied > known
    ? `the database was migrated by a newer Leasehold (its last migration is from ${new Date(applied).toISOString()}, this build's from ${new Date(known).toISOString()}): run that newer build, or a database of this version`
    : null;
}

/**
 * Why this build cannot use the database as it is, or null: not migrated at all, migrated
 * by an older build (its statements would fail on a missing column, mid-verb), or by a
 * newer one (they would read and write a schema they were not written for).
 */
export async function schemaProblem(db: Executor): Promise<string | null> {
  const applied = await newestAppliedMigration(db);
  const known = newestKnownMigration();
  if (applied === null) return NOT_MIGRATED;
  if (applied < known) return `the database was migrated by an older Leasehold (its last migration is from ${new Date(applied).toISOString()}, this build's from ${new Date(known).toISOString()}): run \`npx leasehold migrate\``;
  return newerSchemaText(applied, known);
}
