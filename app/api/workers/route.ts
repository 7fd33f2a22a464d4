import { json, noQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { readWorkers } from '@/lib/server/console-reads';

/**
 * GET /api/workers — worker process incarnations, live ones first. A worker is stale when
 * it has not reported for longer than a lease: its jobs' leases have run out by then.
 */
export const GET = route('viewer', async (req: Request) => {
  noQuery(req);
  return json(await readWorkers());
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
