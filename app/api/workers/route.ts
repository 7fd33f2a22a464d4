import { workersDto } from '@/lib/http/dto';
import { json, route } from '@/lib/http/respond';
import { dbNow, listWorkers } from '@/lib/queue/read';
import { serverContext } from '@/lib/server/context';

/**
 * GET /api/workers — worker process incarnations, live ones first. A worker is stale when
 * it has not reported for longer than a lease: its jobs' leases have run out by then.
 */
export const GET = route('viewer', async () => {
  const { readPool, cfg } = serverContext();
  const [workers, now] = await Promise.all([listWorkers(readPool, { staleAfterMs: cfg.leaseMs }), dbNow(readPool)]);
  return json(workersDto(workers, cfg.leaseMs, now));
});
