import { json, readQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { newerQuery } from '@/lib/http/schemas';
import { checkFilterRedaction } from '@/lib/http/redact';
import { readNewer, redactionOf } from '@/lib/server/console-reads';

/** GET /api/jobs/newer?after=ID&<filters> — how many jobs matching the filters are newer than ID (capped; shared by viewers for a second). */
export const GET = route('viewer', async (req: Request, _ctx, who) => {
  const { after, ...filter } = newerQuery.parse(readQuery(req));
  checkFilterRedaction(filter, redactionOf(who));
  return json(await readNewer(after, filter));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
