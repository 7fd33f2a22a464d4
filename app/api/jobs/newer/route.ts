import { json, route } from '@/lib/http/respond';
import { newerQuery } from '@/lib/http/schemas';
import { countNewer } from '@/lib/queue/read';
import { serverContext } from '@/lib/server/context';

/** GET /api/jobs/newer?after=ID&<filters> — how many jobs matching the filters are newer than ID (capped). */
export const GET = route('viewer', async (req: Request) => {
  const { after, ...filter } = newerQuery.parse(Object.fromEntries(new URL(req.url).searchParams));
  return json(await countNewer(serverContext().readPool, filter, after));
});
