import { parseJobId, readJsonOptional, route } from '@/lib/http/respond';
import { cancelBody } from '@/lib/http/schemas';
import { singleActionResponse } from '@/lib/http/single-action';
import { jobCancel } from '@/lib/queue/ops';
import { serverContext } from '@/lib/server/context';

/** POST /api/jobs/:id/cancel — waiting jobs end at once; a running job is asked to stop. */
export const POST = route(async (req: Request, ctx: { params: Promise<{ id: string }> }) => {
  const id = parseJobId((await ctx.params).id);
  cancelBody.parse(await readJsonOptional(req));
  return singleActionResponse(await jobCancel(serverContext().pool, { ids: [id] }));
});
