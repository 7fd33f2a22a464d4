import { json, readListQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { auditQuery, filterFields, LIVE_MAX_MS, liveQuery } from '@/lib/http/schemas';
import { checkFilterRedaction } from '@/lib/http/redact';
import { readAudit, readJob, readLookup, readNewer, readStats, readWorkers, redactionOf } from '@/lib/server/console-reads';
import { liveOwner, liveRoomRefusal, type LiveTopic, liveStream } from '@/lib/server/live';
import { statsRefetchMs } from '@/lib/ui/snapshot-age';

/**
 * Each open stream's Request, held as long as the stream: the Request's signal follows the
 * client's disconnect only while the Request object lives (undici links the two weakly), so
 * a Request left to the garbage collector would leave its stream open until its reader
 * cancels it or LIVE_MAX_MS ends it — counted against the viewer's streams meanwhile.
 */
const requestOf = new WeakMap<ReadableStream, Request>();

/**
 * GET /api/live?stats=1&ids=…&after=…&<filters>&job=…&workers=1&every=ms — the console's
 * live feed (text/event-stream): the events `stats`, `lookup`, `newer`, `job`, `audit` and
 * `workers` every `every` ms, with the bodies of GET /api/stats, /api/jobs/lookup,
 * /api/jobs/newer, /api/jobs/:id, /api/audit?jobId= and /api/workers (lib/server/live.ts).
 * 503 (the page polls) past the process's streams, 429 past the viewer's (lib/http/schemas.ts), each
 * with Retry-After: when the first of those streams will have ended.
 */
export const GET = route('viewer', async (req: Request, _ctx, who) => {
  const { stats, ids, after, job, workers, every, ...filter } = liveQuery.parse(readListQuery(req, Object.keys(filterFields)));
  const redaction = redactionOf(who);
  checkFilterRedaction(filter, redaction);
  // A HEAD (Next serves it with GET) gets the headers only: a stream no one reads would hold
  // one of the viewer's stream slots until LIVE_MAX_MS ended it.
  if (req.method === 'HEAD') return new Response(null, { headers: LIVE_HEADERS });
  const owner = liveOwner(who);
  const full = liveRoomRefusal(owner);
  if (full) return json(full.error.toJSON(), full.error.httpStatus, { 'retry-after': String(full.retryAfterS) });
  const topics: LiveTopic[] = [];
  // An old snapshot (the first viewer after a quiet spell) is followed by a fresh one within a second, not a whole interval later.
  if (stats) topics.push({ event: 'stats', read: readStats, nextWithinMs: (s) => statsRefetchMs(every, s as Parameters<typeof statsRefetchMs>[1]) });
  if (ids?.length) topics.push({ event: 'lookup', read: () => readLookup(ids, redaction) });
  if (after) topics.push({ event: 'newer', read: () => readNewer(after, filter) });
  if (job) {
    const jobAudit = auditQuery.parse({ jobId: job });
    // Without its payload, which never changes: the page reads it once (GET /api/jobs/:id).
    topics.push({ event: 'job', read: () => readJob(job, { payload: false }, redaction) }, { event: 'audit', read: () => readAudit(jobAudit, redaction) });
  }
  if (workers) topics.push({ event: 'workers', read: readWorkers });
  const stream = liveStream(topics, { everyMs: every, maxMs: LIVE_MAX_MS, signal: req.signal, owner });
  requestOf.set(stream, req);
  return new Response(stream, { headers: LIVE_HEADERS });
});

const LIVE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  // no-transform: the server's compression leaves the stream alone (it would buffer it).
  'cache-control': 'no-store, no-transform',
  'x-accel-buffering': 'no',
};

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
