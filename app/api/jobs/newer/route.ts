import { json, route } from '@/lib/http/respond';
import { newerQuery } from '@/lib/http/schemas';
import { countNewer } from '@/lib/queue/read';
import { serverContext } from '@/lib/server/context';
import { readCache } from '@/lib/server/read-cache';

/** GET /api/jobs/newer?after=ID&<filters> — how many jobs matching the filters are newer than ID (capped; shared by viewers for a second). */
export const GET = route('viewer', async (req: Request) => {
  const { after, ...filter } = newerQuery.parse(Object.fromEntries(new URL(req.url).searchParams));
  const { value } = await readCache.get(`newer ${after} ${JSON.stringify(filter)}`, () => countNewer(serverContext().readPool, filter, after));
  return json(value);
});
