import type pg from 'pg';
import { type Executor, isPool } from '../../db/client';
import { QueueError } from '../errors';
import * as sql from '../statements';
import { storableText } from '../text';

export const run = <R extends pg.QueryResultRow = any>(db: Executor, st: sql.Statement, values: unknown[]) =>
  db.query<R>({ name: st.name, text: st.text, values });

/**
 * A PostgreSQL array literal for ids and integers, built directly: node-postgres quotes and
 * escapes every element of a JS array one by one, a measurable cost on a batch of a
 * thousand. Only for digit strings and integers (nothing to quote).
 */
export const intArray = (values: readonly (string | number)[]) => `{${values.join(',')}}`;

/**
 * A per-job input of a fenced write, as the JSON object its statement looks each row up in
 * by id (statements/fragments.ts `at`): {"42": value, …}. Null values are left out (a missing key
 * reads as NULL), so the common all-null input (no result keys) is `{}`. Texts are made
 * storable: jsonb refuses a NUL or half an emoji, which would fail every write of the batch.
 */
export function byJobId<T extends { jobId: string }>(items: readonly T[], value: (item: T) => unknown): string {
  const o: Record<string, unknown> = {};
  for (const i of items) {
    const v = value(i);
    if (v !== null && v !== undefined) o[i.jobId] = typeof v === 'string' ? storableText(v) : v;
  }
  return JSON.stringify(o);
}

export const uniq = (ids: readonly string[]) => [...new Set(ids)];

/**
 * Tries of an insert whose key's job let it go between the conflict and the lookup (an
 * idempotency key's job deleted by an operator or retention; a singleton key's job finished):
 * the key is free again each time, so each try can only lose to a new job taking it, and that
 * one letting it go as fast.
 */
export const KEY_FREED_TRIES = 5;

/** The partial unique index that holds singleton keys (migration 0030). */
export const SINGLETON_KEY_INDEX = 'jobs_singleton_key_idx';

export const isDeadlock = (e: { code?: string }) => e.code === '40P01';

/** Tries of a statement that keeps losing races (see retriedOnLostRace). */
export const LOST_RACE_TRIES = 5;

/**
 * Runs `statement`, and again while it fails with an error `lost` recognises — a race that
 * rolled the statement back whole (a deadlock's victim, a key taken meanwhile), which the
 * next try, on a new snapshot, sees — at most LOST_RACE_TRIES times. Only on a pool, where
 * the statement was its own transaction: inside a caller's transaction the error is the
 * caller's (its transaction is over; a try there would only fail again, hiding the cause).
 * Each try can only lose to yet another statement, so the last loss is a 503 that says so.
 */
export async function retriedOnLostRace<T>(
  db: Executor,
  lost: (e: { code?: string; constraint?: string }) => boolean,
  statement: () => Promise<T>,
): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await statement();
    } catch (err) {
      const e = (err ?? {}) as { code?: string; constraint?: string };
      if (!lost(e) || !isPool(db)) throw err;
      if (tries >= LOST_RACE_TRIES) {
        throw new QueueError('unavailable', `the statement lost a race with other writers ${LOST_RACE_TRIES} times in a row (${e.code}) and changed nothing: try again`);
      }
    }
  }
}
