/**
 * The overview's numbers are computed once for every viewer: twenty concurrent requests
 * (twenty open dashboards polling at once) cost one computation, and the next one is not
 * run before the refresh interval.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type pg from 'pg';
import { testDatabase } from '../../test/db';
import { insertJob } from '../../test/factories';
import { MIN_REFRESH_MS, StatsCache } from './stats-cache';

const db = await testDatabase();

test('twenty concurrent viewers share one stats computation', async () => {
  for (let i = 0; i < 5; i++) await insertJob(db.pool, { status: 'completed', queue: 'sc-q' });
  let computations = 0;
  const counting = new Proxy(db.pool, {
    get(target, prop, receiver) {
      if (prop === 'query')
        return (text: unknown, values?: unknown[]) => {
          if (typeof text === 'string' && text.includes('pg_stat_user_tables') && text.includes('n_live_tup')) computations++;
          return target.query(text as string, values);
        };
      return Reflect.get(target, prop, receiver);
    },
  }) as pg.Pool;
  const cache = new StatsCache(counting, { leaseMs: 30_000 });
  try {
    const results = await Promise.all(Array.from({ length: 20 }, () => cache.get()));
    assert.equal(computations, 1);
    assert.ok(results.every((r) => r.counts.completed === 5 && r.kinds.completed === 'exact'));
    await insertJob(db.pool, { status: 'completed', queue: 'sc-q' });
    const again = await cache.get();
    assert.equal(computations, 1, 'within the refresh interval the snapshot is served as it is');
    assert.equal(again.counts.completed, 5);
    assert.ok(again.refreshMs >= MIN_REFRESH_MS);
    assert.ok(again.dbNow.getTime() >= again.computedAt.getTime(), 'dbNow moves on from the snapshot time');
  } finally {
    cache.stop();
  }
});
