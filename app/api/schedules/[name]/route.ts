import { otherMethods } from '@/lib/http/unrouted';
import { scheduleDefineRoute, scheduleRemoveRoute } from '@/lib/http/schedule-actions';

/**
 * PUT /api/schedules/:name {cron, type, payload?, queue?, timezone?, maxAttempts?, priority?,
 * reason?} — define or redefine a recurring job, as `leasehold schedule add` does: 200
 * {schedule}; 400 for a cron, zone, type or payload that cannot be; 422 for a type no worker
 * registers. DELETE /api/schedules/:name {reason?} — remove it (the jobs it enqueued stay):
 * 200 {removed}; 404 for no such schedule. Operator or admin; audited (`schedule.add`,
 * `schedule.remove`). A schedule a handlers module defines is defined again at each worker
 * start: change it there.
 */
export const PUT = scheduleDefineRoute();
export const DELETE = scheduleRemoveRoute();

export const { GET, POST, PATCH, OPTIONS } = otherMethods('PUT', 'DELETE');
