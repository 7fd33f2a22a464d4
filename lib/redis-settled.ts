import type { Doorbell } from './queue/signal';

/**
 * Resolves once a Redis doorbell that is still making its first connection is ready, or
 * fails, or after `timeoutMs`: a process's first readiness check or scrape would otherwise report
 * "Redis not in use" only because the connection was not made yet.
 * (A method of the doorbell, not an instanceof test: Next bundles each route with its own
 * copy of the module, and the shared context's doorbell comes from another one.)
 */
export async function redisSettled(doorbell: Doorbell, timeoutMs = 1_000): Promise<void> {
  await doorbell.settled?.(timeoutMs);
}
