/**
 * Drops the databases of this test run (named after TEST_RUN_ID, see test/env.ts) and deletes
 * its Redis keys (prefixed by test/processes.ts uniquePrefix, and the browser tests' of
 * test/e2e/env.ts).
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { PG_ADMIN_URL, REDIS_URL, RUN_ID } from './env';
import { unlinkMatching } from './redis-keys';

const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
await admin.connect();
const { rows } = await admin.query(
  `SELECT datname FROM pg_database WHERE datname ~ $1`,
  [`^lh_(t|tpl|e2e)_${RUN_ID}(_|$)`],
);
for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
await admin.end();

const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
try {
  await redis.connect();
  for (const pattern of [`lh_test_${RUN_ID}_*`, `lh_e2e_${RUN_ID}:*`]) await unlinkMatching(redis, pattern);
} catch (err) {
  console.error(`could not delete this run's Redis keys: ${(err as Error).message}`);
} finally {
  redis.disconnect();
}
