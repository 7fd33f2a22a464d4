import { json, parseJobId, readQuery, route } from '@/lib/http/respond';
import { jobDetailQuery } from '@/lib/http/schemas';
import { otherMethods } from '@/lib/http/unrouted';
import { readJob, redactionOf } from '@/lib/server/console-reads';

/**
 * GET /api/jobs/:id[?payload=0] — the job with its attempts (the running one included);
 * payload=0 leaves the payload out (a page refreshing the job reads it once).
 */
export const GET = route('viewer', async (req: Request, ctx: { params: Promise<{ id: string }> }, who) => {
  const id = parseJobId((await ctx.params).id);
  const { payload } = jobDetailQuery.parse(readQuery(req));
  return json(await readJob(id, { payload: payload !== '0' }, redactionOf(who)));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
