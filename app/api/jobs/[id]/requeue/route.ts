import { actorOf, audited, jobActionEntry } from '@/lib/audit/log';
import { parseJobId, readJsonOptional, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { requeueBody } from '@/lib/http/schemas';
import { existingJob, singleActionResponse } from '@/lib/http/single-action';
import { jobRequeue } from '@/lib/queue/ops';
import { serverContext } from '@/lib/server/context';

/**
 * POST /api/jobs/:id/requeue {resetAttempts?, revokeLease?, reason?} — the CAS transition;
 * 409 with the reason when the job's state forbids it (a live lease is never taken
 * unless revokeLease is set). Operator or admin; one audit entry, changed or not.
 */
export const POST = route('operator', async (req: Request, ctx: { params: Promise<{ id: string }> }, who) => {
  const id = parseJobId((await ctx.params).id);
  const body = requeueBody.parse(await readJsonOptional(req));
  const { pool, doorbell, results } = serverContext();
  const { entry, outcome } = jobActionEntry('requeue', [id], body.reason, { resetAttempts: !!body.resetAttempts, revokeLease: !!body.revokeLease });
  const report = await audited(
    pool,
    actorOf(who),
    entry,
    () => existingJob(jobRequeue(pool, { ids: [id], resetAttempts: body.resetAttempts, revokeLease: body.revokeLease, doorbell, results })),
    outcome,
  );
  return singleActionResponse(report);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
