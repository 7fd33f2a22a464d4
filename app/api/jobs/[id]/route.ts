import { detailDto } from '@/lib/http/dto';
import { json, parseJobId, route } from '@/lib/http/respond';
import { QueueError } from '@/lib/queue/errors';
import { getJob } from '@/lib/queue/read';
import { serverContext } from '@/lib/server/context';

/** GET /api/jobs/:id — the job with its attempts (the running one included). */
export const GET = route('viewer', async (_req: Request, ctx: { params: Promise<{ id: string }> }) => {
  const id = parseJobId((await ctx.params).id);
  const detail = await getJob(serverContext().readPool, id);
  if (!detail) throw new QueueError('not_found', `no job with id ${id}`);
  return json(detailDto(detail));
});
