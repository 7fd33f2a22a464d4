/** What the overview says of the database under the queue (console-stats.ts DatabaseHealth). */
import type { StatsDto } from '../api/types';

type Database = StatsDto['database'];

/**
 * An open transaction this old is worth an operator's look: a job queue's own transactions
 * last milliseconds, and while one lasts, every job finished after it began stays in the
 * table as a dead row that claims and counts read past. (A backup by pg_dump holds one for
 * its whole run: the banner says to check before ending it.)
 */
export const LONG_TRANSACTION_MS = 10 * 60_000;

/**
 * Past this many transaction ids, freezing is overdue: autovacuum forces it from 200 million
 * (autovacuum_freeze_max_age), and PostgreSQL stops accepting writes near 2^31.
 */
export const XID_AGE_WARN = 1_000_000_000;

/**
 * The oldest open transaction with its age as of now (`snapshotAgeMs` added), when it was
 * long enough to call out as the snapshot was read; null otherwise. Judged on the snapshot
 * alone, as the sweep is (sweep.ts): one served minutes after it was read (the first view
 * after a quiet spell) would otherwise age a transaction that may have long ended, and tell
 * the operator to terminate its pid.
 */
export function longTransaction(d: Database, snapshotAgeMs: number): NonNullable<Database['oldestTransaction']> | null {
  const t = d.oldestTransaction;
  if (!t || t.ageMs < LONG_TRANSACTION_MS) return null;
  return { ...t, ageMs: t.ageMs + Math.max(0, snapshotAgeMs) };
}

export const xidAgeHigh = (d: Database) => d.xidAge !== null && d.xidAge >= XID_AGE_WARN;
