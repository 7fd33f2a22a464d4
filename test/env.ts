/**
 * Where the tests find PostgreSQL and Redis. test/run.sh exports these (starting
 * throwaway servers when the defaults are not up); a lone `node --test` falls back to the
 * machine's local servers.
 */
export const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * Names this run's databases: several test runs (other checkouts, other engineers'
 * sessions) can share one PostgreSQL without touching each other's databases.
 */
export const RUN_ID = (process.env.TEST_RUN_ID ?? `p${process.pid}`).toLowerCase().replace(/[^a-z0-9]/g, '');
export const TEMPLATE_DB = process.env.TEST_TEMPLATE_DB ?? `lh_tpl_${RUN_ID}`;

export function urlForDb(db: string): string {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${db}`;
  return u.toString();
}

/**
 * The suites written before access control existed call route handlers and start consoles
 * without credentials: they run with sign-in off (inherited by the processes they start).
 * The access-control suites (lib/auth/*.db.test.ts, app/api/auth.db.test.ts, the hostile
 * input suite) set LEASEHOLD_AUTH=on before they import anything.
 */
process.env.LEASEHOLD_AUTH ??= 'off';
// The host names those suites address route handlers by (with sign-in off, a console
// answers to its own names only: lib/auth/gate.ts hostProblem).
process.env.LEASEHOLD_ALLOWED_HOSTS ??= 'test,console.test';
