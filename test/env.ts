/**
 * Where the tests find PostgreSQL and Redis. test/run.sh exports these (starting
 * throwaway servers when the defaults are not up); a lone `node --test` falls back to the
 * machine's local servers.
 */
export const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEMPLATE_DB = process.env.TEST_TEMPLATE_DB ?? 'leasehold_test_tpl';

export function urlForDb(db: string): string {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${db}`;
  return u.toString();
}
