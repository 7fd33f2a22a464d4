import { json, readQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { historyQuery } from '@/lib/http/schemas';
import { readStatsHistory } from '@/lib/server/console-reads';

/**
 * GET /api/stats/history?range=24h|7d — the workers' counters over the last 24 hours or 7
 * days, from the record the recover sweep keeps (one sample a minute, a week long): rates
 * per bucket, and per queue and job type what the attempts did over the range. Shared by
 * every viewer of this console process for half a minute.
 */
export const GET = route('viewer', async (req: Request) => {
  const { range } = historyQuery.parse(readQuery(req));
  return json(await readStatsHistory(range));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
