import { json, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { log } from '@/lib/log';
import { QueueError } from '@/lib/queue/errors';
import { serverContext } from '@/lib/server/context';
import { redisSettled } from '@/lib/redis-settled';

/** How long readiness waits for a Redis connection that is still being made. */
const REDIS_CONNECT_WAIT_MS = 1_000;

/**
 * GET /api/health — liveness: the process answers (no database call).
 * GET /api/health?ready — readiness: PostgreSQL answers `SELECT 1` (503 when it does not),
 * and whether producers ring workers through Redis or fall back to PostgreSQL NOTIFY.
 */
export const GET = route('public', async (req: Request) => {
  // Other query parameters are ignored, not refused: a probe may add a cache-buster.
  if (!new URL(req.url).searchParams.has('ready')) return json({ ok: true });
  const { readPool, doorbell } = serverContext();
  try {
    await readPool.query('SELECT 1');
  } catch (err) {
    log.warn('readiness: PostgreSQL did not answer', { err });
    throw new QueueError('unavailable', 'PostgreSQL did not answer');
  }
  await redisSettled(doorbell, REDIS_CONNECT_WAIT_MS);
  // redisConfigured, not instanceof: each route bundle has its own copy of the class.
  const redis = doorbell.usingRedis ? 'in use' : doorbell.redisConfigured ? 'unreachable' : 'not configured';
  return json({ ok: true, postgres: 'ok', redis, signal: doorbell.usingRedis ? 'redis' : 'postgres-notify' });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
