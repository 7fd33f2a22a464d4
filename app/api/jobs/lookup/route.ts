import { lookupDto } from '@/lib/http/dto';
import { json, route } from '@/lib/http/respond';
import { lookupQuery } from '@/lib/http/schemas';
import { jobsByIds } from '@/lib/queue/read';
import { serverContext } from '@/lib/server/context';

/** GET /api/jobs/lookup?ids=1,2,3 — the current rows of these jobs, whatever their status (the console's live refresh). */
export const GET = route('viewer', async (req: Request) => {
  const { ids } = lookupQuery.parse(Object.fromEntries(new URL(req.url).searchParams));
  return json(lookupDto(await jobsByIds(serverContext().readPool, ids)));
});
