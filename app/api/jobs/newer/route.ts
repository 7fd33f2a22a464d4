import { json, readListQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { filterFields, newerQuery } from '@/lib/http/schemas';
import { checkFilterRedaction } from '@/lib/http/redact';
import { readNewer, redactionOf } from '@/lib/server/console-reads';

/** GET /api/jobs/newer?after=ID&<filters> — how many jobs matching the filters are newer than ID (capped; shared by viewers for a second). */
export const GET = route('viewer', async (req: Request, _ctx, who) => {
  // An empty filter filters nothing, as on GET /api/jobs (the page's "N new" asks with its own filters).
  const { after, ...filter } = newerQuery.parse(readListQuery(req, Object.keys(filterFields)));
  checkFilterRedaction(filter, redactionOf(who));
  return json(await readNewer(after, filter));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
