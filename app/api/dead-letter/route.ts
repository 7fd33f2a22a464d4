import { deadLetterDto } from '@/lib/http/dto';
import { json, noQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { deadLetterGroups } from '@/lib/queue/dead-letter';
import { serverContext } from '@/lib/server/context';
import { readCache } from '@/lib/server/read-cache';

/** GET /api/dead-letter — failed jobs grouped by type and error fingerprint (shared by all viewers, read at most every 3 s). */
export const GET = route('viewer', async (req: Request) => {
  noQuery(req);
  const { value } = await readCache.get('dead-letter', () => deadLetterGroups(serverContext().readPool), { ttlMs: 3_000 });
  return json(deadLetterDto(value));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
