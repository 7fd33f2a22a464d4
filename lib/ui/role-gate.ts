/**
 * What the signed-in role may do in the console, so a write button it may not use is shown
 * disabled with why, instead of opening a dialog that then says no. The server's gate
 * (lib/auth/gate.ts, route(need) on every handler) stays the guard; this mirrors it.
 */
import { roleAtLeast, type Role } from '@/lib/auth/roles';

export type GatedAction = 'requeue' | 'cancel' | 'recover' | 'delete' | 'copy' | 'reschedule' | 'pause' | 'resume' | 'enqueue' | 'schedule.run' | 'schedule.pause' | 'schedule.resume' | 'schedule.add' | 'schedule.remove' | 'view.save' | 'worker.quiet' | 'worker.resume';

/** The role each action needs: deleting jobs is the admin's; the rest the operator's (README "Roles"). */
export const roleNeeded = (action: GatedAction | string): Role => (action === 'delete' ? 'admin' : 'operator');

const PLURAL: Record<Role, string> = { admin: 'Admins', operator: 'Operators', viewer: 'Viewers' };
const WHAT: Partial<Record<GatedAction, string>> = {
  delete: 'delete jobs',
  copy: 'enqueue copies of jobs',
  enqueue: 'enqueue jobs',
  pause: 'pause queues',
  resume: 'resume queues',
  'schedule.run': 'run schedules',
  'schedule.pause': 'pause schedules',
  'schedule.resume': 'resume schedules',
  'schedule.add': 'define schedules',
  'schedule.remove': 'remove schedules',
  'view.save': 'save views',
  'worker.quiet': 'quiet workers',
  'worker.resume': 'resume workers',
};

/**
 * Why `role` may not run `action` ("Viewers cannot requeue; ask an operator."), or null
 * when it may, or when the role is not known (yet): then the server decides.
 */
export function roleRefusal(action: GatedAction, role: Role | null | undefined): string | null {
  if (!role) return null;
  const need = roleNeeded(action);
  if (roleAtLeast(role, need)) return null;
  return `${PLURAL[role]} cannot ${WHAT[action] ?? action}; ask ${need === 'admin' ? 'an admin' : 'an operator'}.`;
}
