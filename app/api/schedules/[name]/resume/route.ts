import { otherMethods } from '@/lib/http/unrouted';
import { scheduleControlRoute } from '@/lib/http/schedule-actions';

/**
 * POST /api/schedules/:name/resume {reason?} — let a paused schedule tick again, from its next tick after now (the ticks
 * missed while paused are not owed). 200 with the schedule; 404 for no such schedule. Operator or admin; audited.
 */
export const POST = scheduleControlRoute('resume');

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
