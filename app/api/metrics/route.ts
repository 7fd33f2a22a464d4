import { noQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { metricsRegistry } from '@/lib/server/metrics';

/**
 * GET /api/metrics — Prometheus text format: jobs per queue and status, the worker
 * processes' counters and histograms, workers alive, the Redis signal backlog, and this
 * process's default metrics. Job counts are cached for a few seconds per process.
 */
export const GET = route('viewer', async (req: Request) => {
  noQuery(req);
  const registry = metricsRegistry();
  return new Response(await registry.metrics(), {
    status: 200,
    headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' },
  });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
