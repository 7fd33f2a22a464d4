import { route } from '@/lib/http/respond';
import { LIVE_MAX_MS, liveQuery } from '@/lib/http/schemas';
import { readLookup, readNewer, readStats } from '@/lib/server/console-reads';
import { assertLiveRoom, liveOwner, type LiveTopic, liveStream } from '@/lib/server/live';

/**
 * GET /api/live?stats=1&ids=…&after=…&<filters>&every=ms — the console's live feed
 * (text/event-stream): the events `stats`, `lookup` and `newer` every `every` ms, with the
 * bodies of GET /api/stats, /api/jobs/lookup and /api/jobs/newer (lib/server/live.ts).
 * 503 (the page polls) past the process's streams or the viewer's (lib/http/schemas.ts).
 */
export const GET = route('viewer', async (req: Request, _ctx, who) => {
  const { stats, ids, after, every, ...filter } = liveQuery.parse(Object.fromEntries(new URL(req.url).searchParams));
  const owner = liveOwner(who);
  assertLiveRoom(owner);
  const topics: LiveTopic[] = [];
  if (stats) topics.push({ event: 'stats', read: readStats });
  if (ids?.length) topics.push({ event: 'lookup', read: () => readLookup(ids) });
  if (after) topics.push({ event: 'newer', read: () => readNewer(after, filter) });
  return new Response(liveStream(topics, { everyMs: every, maxMs: LIVE_MAX_MS, signal: req.signal, owner }), {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      // no-transform: the server's compression leaves the stream alone (it would buffer it).
      'cache-control': 'no-store, no-transform',
      'x-accel-buffering': 'no',
    },
  });
});
