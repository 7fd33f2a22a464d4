import { json, readQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { lookupQuery } from '@/lib/http/schemas';
import { readLookup, redactionOf } from '@/lib/server/console-reads';

/**
 * GET /api/jobs/lookup?ids=1,2,3 — the current rows of these jobs, whatever their status
 * (the console's live refresh; viewers of the same page share one read a second).
 */
export const GET = route('viewer', async (req: Request, _ctx, who) => {
  const { ids } = lookupQuery.parse(readQuery(req));
  return json(await readLookup(ids, redactionOf(who)));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
