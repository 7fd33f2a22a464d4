import { otherMethods } from '@/lib/http/unrouted';
import { workerQuietRoute } from '@/lib/http/worker-actions';

/**
 * POST /api/workers/:id/resume {reason?} — a quieted worker process claims again (with its
 * next heartbeat). 200 {workerId, quiet, changed}; 404 for no such worker, 409 for one that
 * has stopped. Operator or admin; audited.
 */
export const POST = workerQuietRoute('resume');

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
