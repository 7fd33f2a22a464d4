import { json, parseJobId, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { readJob } from '@/lib/server/console-reads';

/** GET /api/jobs/:id — the job with its attempts (the running one included). */
export const GET = route('viewer', async (_req: Request, ctx: { params: Promise<{ id: string }> }) => {
  return json(await readJob(parseJobId((await ctx.params).id)));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
