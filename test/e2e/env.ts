/** The browser tests' own database and Redis key prefix (shared by the config and the specs). */
import { REDIS_URL, RUN_ID, urlForDb } from '../env';

export const E2E_DB = process.env.E2E_DB ?? `lh_e2e_${RUN_ID}`;
export const e2eDatabaseUrl = () => urlForDb(E2E_DB);

export function e2eEnv(): Record<string, string> {
  return {
    REDIS_URL,
    LEASEHOLD_REDIS_PREFIX: `lh_e2e_${RUN_ID}`,
    LEASEHOLD_LEASE_MS: '10000',
    LEASEHOLD_HEARTBEAT_MS: '1000',
    LEASEHOLD_RECOVER_MS: '1000',
    LEASEHOLD_POLL_MS: '1000',
    LEASEHOLD_SHUTDOWN_GRACE_MS: '1000',
    LEASEHOLD_LOG: 'warn',
    LEASEHOLD_ENV: 'e2e',
    // Links from each attempt to its logs (never followed by the tests: only their addresses are checked).
    LEASEHOLD_LOG_URL: 'http://127.0.0.1:9/logs?job={id}&attempt={attempt}&worker={worker}&from={startedMs}&to={finishedMs}',
    // The browser specs written before sign-in existed; test/e2e/auth.spec.ts signs in through a second console.
    LEASEHOLD_AUTH: 'off',
  };
}
