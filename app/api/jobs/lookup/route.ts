import { lookupDto } from '@/lib/http/dto';
import { json, route } from '@/lib/http/respond';
import { lookupQuery } from '@/lib/http/schemas';
import { agedBy, jobsByIds } from '@/lib/queue/read';
import { serverContext } from '@/lib/server/context';
import { readCache } from '@/lib/server/read-cache';

/**
 * GET /api/jobs/lookup?ids=1,2,3 — the current rows of these jobs, whatever their status
 * (the console's live refresh; viewers of the same page share one read a second).
 */
export const GET = route('viewer', async (req: Request) => {
  const { ids } = lookupQuery.parse(Object.fromEntries(new URL(req.url).searchParams));
  const { value, ageMs } = await readCache.get(`lookup ${ids.join(',')}`, () => jobsByIds(serverContext().readPool, ids));
  // The rows carry the database clock and the leases left: moved on by the answer's age.
  return json(lookupDto(agedBy(value, ageMs)));
});
