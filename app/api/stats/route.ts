import { statsSnapshotDto } from '@/lib/http/dto';
import { json, route } from '@/lib/http/respond';
import { serverContext } from '@/lib/server/context';

/**
 * GET /api/stats — counts per status and queue (exact, or "≈" estimates with their basis),
 * oldest due job, expired leases, workers, the wake-up signal per queue, and throughput.
 * Served from one per-process cache shared by every viewer (lib/queue/stats-cache.ts):
 * no COUNT(*) of the table per request.
 */
export const GET = route('viewer', async () => json(statsSnapshotDto(await serverContext().stats.get())));
