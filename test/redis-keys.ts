/** Deleting Redis keys by pattern (a test run's or a script's own prefix), without blocking the server. */
import type { Redis } from 'ioredis';

/** Unlinks every key matching `pattern` (SCAN, not KEYS: the shared server keeps answering). */
export async function unlinkMatching(redis: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
}
