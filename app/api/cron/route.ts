import { json, readQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { cronTicksQuery } from '@/lib/http/schemas';
import { cronUsesHash, nextTick } from '@/lib/queue/cron';
import { QueueError } from '@/lib/queue/errors';
import { dbNow } from '@/lib/queue/read';
import { serverContext } from '@/lib/server/context';

/**
 * GET /api/cron?cron=&timezone=&name=&count= — the next ticks of an expression, computed as
 * the workers compute a schedule's (the same function, from the database clock): what the
 * console's schedule dialog shows while one is typed. A 400 says what is wrong with it.
 */
export const GET = route('viewer', async (req: Request) => {
  const q = cronTicksQuery.parse(readQuery(req));
  // Without the name an H is a new random draw at each tick: a series no schedule runs.
  if (cronUsesHash(q.cron) && q.name === undefined) {
    throw new QueueError('invalid_request', `cron ${JSON.stringify(q.cron)}: an H stands for a value the schedule's name fixes: give name`);
  }
  // Checked before the database is asked: a mistyped expression is a 400 even while it is away.
  nextTick(q.cron, q.timezone, new Date(), q.name);
  const now = await dbNow(serverContext().readPool);
  const ticks: Date[] = [];
  for (let after = now; ticks.length < q.count; after = ticks.at(-1)!) ticks.push(nextTick(q.cron, q.timezone, after, q.name));
  return json({ ticks: ticks.map((t) => t.toISOString()), dbNow: now.toISOString() });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
