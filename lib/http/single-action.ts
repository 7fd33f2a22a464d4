/** One-job actions (POST /api/jobs/:id/requeue and /cancel): a missing job is a 404, a refusal a 409. */
import { QueueError } from '../queue/errors';
import type { ActionReport } from '../queue/ops';
import { actionItemDto } from './dto';
import { json } from './respond';

/**
 * A one-job action's report, or its 404 thrown from inside the audited action: a request
 * for a job that does not exist is refused, and a refused request leaves no audit entry.
 */
export async function existingJob(report: Promise<ActionReport>): Promise<ActionReport> {
  const r = await report;
  const item = r.items[0]!;
  if (item.outcome === 'not_found') throw new QueueError('not_found', `no job with id ${item.id}`);
  return r;
}

/** Turns the report of an existing job (see existingJob) into the API's answer: 200 with the job, or 409 with why. */
export function singleActionResponse(report: ActionReport): Response {
  const item = report.items[0]!;
  if (!item.ok) {
    const e = new QueueError('state_forbids', item.reason ?? 'the job is not in a state that allows this', {
      status: item.job?.status,
    });
    return json({ ...e.toJSON(), item: actionItemDto(item) }, 409);
  }
  return json(actionItemDto(item));
}
