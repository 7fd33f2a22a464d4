import { actorOf, audited, rescheduleEntry } from '@/lib/audit/log';
import { parseJobId, readJson, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { rescheduleBody } from '@/lib/http/schemas';
import { existingJob, singleActionResponse } from '@/lib/http/single-action';
import { jobReschedule } from '@/lib/queue/ops';
import { serverContext } from '@/lib/server/context';

/**
 * POST /api/jobs/:id/reschedule {runAt?, priority?, reason?} — the CAS move of a waiting
 * (queued or retrying) job: a new due time, a new priority, or both; 409 with the reason for
 * a job that runs or has finished. Operator or admin; one audit entry, changed or not.
 */
export const POST = route('operator', async (req: Request, ctx: { params: Promise<{ id: string }> }, who) => {
  const id = parseJobId((await ctx.params).id);
  const body = rescheduleBody.parse(await readJson(req));
  const { pool, doorbell } = serverContext();
  const { entry, outcome } = rescheduleEntry([id], body.reason, body.runAt, body.priority);
  const report = await audited(pool, actorOf(who), entry, () => existingJob(jobReschedule(pool, { ids: [id], runAt: body.runAt, priority: body.priority, doorbell })), outcome);
  return singleActionResponse(report);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
