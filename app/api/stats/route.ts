import { json, noQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { readStats } from '@/lib/server/console-reads';

/**
 * GET /api/stats — counts per status and queue (exact, or "≈" estimates with their basis),
 * oldest due job, expired leases, workers, the wake-up signal per queue, and throughput.
 * Served from one per-process cache shared by every viewer (lib/queue/stats-cache.ts):
 * no COUNT(*) of the table per request.
 */
export const GET = route('viewer', async (req: Request) => {
  noQuery(req);
  return json(await readStats());
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
