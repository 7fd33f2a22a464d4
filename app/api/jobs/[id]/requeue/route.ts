import { parseJobId, readJsonOptional, route } from '@/lib/http/respond';
import { requeueBody } from '@/lib/http/schemas';
import { singleActionResponse } from '@/lib/http/single-action';
import { jobRequeue } from '@/lib/queue/ops';
import { serverContext } from '@/lib/server/context';

/**
 * POST /api/jobs/:id/requeue {resetAttempts?, revokeLease?} — the CAS transition;
 * 409 with the reason when the job's state forbids it (a live lease is never taken
 * unless revokeLease is set).
 */
export const POST = route(async (req: Request, ctx: { params: Promise<{ id: string }> }) => {
  const id = parseJobId((await ctx.params).id);
  const body = requeueBody.parse(await readJsonOptional(req));
  const { pool, doorbell } = serverContext();
  return singleActionResponse(
    await jobRequeue(pool, { ids: [id], resetAttempts: body.resetAttempts, revokeLease: body.revokeLease, doorbell }),
  );
});
