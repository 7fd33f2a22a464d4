import { otherMethods } from '@/lib/http/unrouted';
import { scheduleControlRoute } from '@/lib/http/schedule-actions';

/**
 * POST /api/schedules/:name/pause {reason?} — stop a schedule's ticks until it is resumed (running jobs and
 * jobs already enqueued are left alone). 200 with the schedule; 404 for no such schedule. Operator or admin; audited.
 */
export const POST = scheduleControlRoute('pause');

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
