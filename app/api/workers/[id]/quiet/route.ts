import { otherMethods } from '@/lib/http/unrouted';
import { workerQuietRoute } from '@/lib/http/worker-actions';

/**
 * POST /api/workers/:id/quiet {reason?} — the worker process claims no new job (read with its
 * next heartbeat); the jobs in hand finish, their leases renewed. 200 {workerId, quiet, changed};
 * 404 for no such worker, 409 for one that has stopped. Operator or admin; audited.
 */
export const POST = workerQuietRoute('quiet');

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
