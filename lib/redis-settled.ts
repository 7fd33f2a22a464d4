import { type Doorbell, RedisDoorbell, redisReady } from './queue/signal';

/**
 * Resolves once a Redis doorbell that is still making its first connection is ready, or
 * fails, or after `timeoutMs`: a process's first readiness check or scrape would otherwise report
 * "Redis not in use" only because the connection was not made yet.
 */
export async function redisSettled(doorbell: Doorbell, timeoutMs = 1_000): Promise<void> {
  if (!(doorbell instanceof RedisDoorbell) || doorbell.usingRedis) return;
  if (!['wait', 'connecting', 'connect'].includes(doorbell.redis.status)) return;
  await redisReady(doorbell.redis, timeoutMs, true); // connected, or refused: settled either way
}
