import { type Doorbell, RedisDoorbell } from './queue/signal';

/**
 * Resolves once a Redis doorbell that is still making its first connection is ready, or
 * fails, or after `timeoutMs`: a process's first readiness check or scrape would otherwise report
 * "Redis not in use" only because the connection was not made yet.
 */
export function redisSettled(doorbell: Doorbell, timeoutMs = 1_000): Promise<void> {
  if (!(doorbell instanceof RedisDoorbell) || doorbell.usingRedis) return Promise.resolve();
  if (!['wait', 'connecting', 'connect'].includes(doorbell.redis.status)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      doorbell.redis.off('ready', done).off('error', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    doorbell.redis.once('ready', done).once('error', done); // connected, or refused: settled either way
  });
}
