import { json, readQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { cronTicksQuery } from '@/lib/http/schemas';
import { nextTick } from '@/lib/queue/cron';
import { dbNow } from '@/lib/queue/read';
import { serverContext } from '@/lib/server/context';

/**
 * GET /api/cron?cron=&timezone=&name=&count= — the next ticks of an expression, computed as
 * the workers compute a schedule's (the same function, from the database clock): what the
 * console's schedule dialog shows while one is typed. A 400 says what is wrong with it.
 */
export const GET = route('viewer', async (req: Request) => {
  const q = cronTicksQuery.parse(readQuery(req));
  const now = await dbNow(serverContext().readPool);
  const ticks: Date[] = [];
  for (let after = now; ticks.length < q.count; after = ticks.at(-1)!) ticks.push(nextTick(q.cron, q.timezone, after, q.name));
  return json({ ticks: ticks.map((t) => t.toISOString()), dbNow: now.toISOString() });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
