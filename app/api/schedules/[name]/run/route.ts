import { otherMethods } from '@/lib/http/unrouted';
import { scheduleRunRoute } from '@/lib/http/schedule-actions';

/**
 * POST /api/schedules/:name/run {reason?} — enqueue the job the schedule's ticks make, now,
 * leaving its next tick where it is. 202 {schedule, id, queue, created}; a repeat within a
 * second or so answers the same job with created: false. 404 for no such schedule. Operator
 * or admin; audited.
 */
export const POST = scheduleRunRoute();

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
