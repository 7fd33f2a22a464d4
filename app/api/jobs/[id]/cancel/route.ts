import { actorOf, audited, jobActionEntry } from '@/lib/audit/log';
import { parseJobId, readJsonOptional, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { reasonBody } from '@/lib/http/schemas';
import { existingJob, singleActionResponse } from '@/lib/http/single-action';
import { jobCancel } from '@/lib/queue/ops';
import { serverContext } from '@/lib/server/context';

/** POST /api/jobs/:id/cancel {reason?} — waiting jobs end at once; a running job is asked to stop. Operator or admin; audited. */
export const POST = route('operator', async (req: Request, ctx: { params: Promise<{ id: string }> }, who) => {
  const id = parseJobId((await ctx.params).id);
  const body = reasonBody.parse(await readJsonOptional(req));
  const { pool } = serverContext();
  const { entry, outcome } = jobActionEntry('cancel', [id], body.reason);
  const report = await audited(pool, actorOf(who), entry, () => existingJob(jobCancel(pool, { ids: [id] })), outcome);
  return singleActionResponse(report);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
