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

/** Turns a one-job action report into the API's answer: 200 with the job, or 404/409 with why. */
import { QueueError } from '../queue/errors';
import type { ActionReport } from '../queue/ops';
import { actionItemDto } from './dto';
import { json } from './respond';

export function singleActionResponse(report: ActionReport): Response {
  const item = report.items[0]!;
  if (item.outcome === 'not_found') throw new QueueError('not_found', `no job with id ${item.id}`);
  if (!item.ok) {
    const e = new QueueError('state_forbids', item.reason ?? 'the job is not in a state that allows this', {
      status: item.job?.status,
    });
    return json({ ...e.toJSON(), item: actionItemDto(item) }, 409);
  }
  return json(actionItemDto(item));
}
