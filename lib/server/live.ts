/**
 * The console's live feed: one server-sent-events stream per open page, instead of one
 * HTTP request per query per refresh. A page names what it watches (the overview's
 * numbers, the rows it shows, its "N new" count); every `everyMs` the stream sends each
 * as an event, read through the same shared caches as the polling routes
 * (console-reads.ts), so ten pages watching the same thing cost one read a second plus
 * ten small writes — no request to route, authorize and parse per page per second.
 *
 *  - A topic whose read fails sends a `problem` event with the error body a request would
 *    have got; the page then falls back to polling, which shows the error where it always has.
 *  - A reader that does not keep up (a frozen tab, a slow link) is skipped, not queued for:
 *    the next event carries the newest state anyway.
 *  - After `maxMs` the stream says `bye` and ends, and the page opens a new one: the new
 *    request passes the gate again, so a session that ended or a user disabled meanwhile
 *    stops receiving within that time.
 */
import { toQueueError } from '../http/respond';
import { log } from '../log';
import { QueueError } from '../queue/errors';
import type { Principal } from '../auth/roles';
import { LIVE_RETRY_MS, MAX_LIVE_STREAMS, MAX_LIVE_STREAMS_PER_VIEWER } from '../http/schemas';
import { Places } from './places';

export interface LiveTopic {
  /** The SSE event name the page listens for. */
  event: string;
  read: () => Promise<unknown>;
  /** How soon the next tick should come after this value (an old stats snapshot: within a second); the stream's everyMs by default. */
  nextWithinMs?: (value: unknown) => number | false;
}

export interface LiveOptions {
  everyMs: number;
  maxMs: number;
  /** The request's signal: the client went away. */
  signal?: AbortSignal;
  /** Who holds the stream (liveOwner), counted against MAX_LIVE_STREAMS_PER_VIEWER; null: nobody in particular. */
  owner?: string | null;
}

/** Each open stream: whose, and by when it will have ended at the latest: its maxMs, then the tick that notices. */
const streams = new Places();
/** Streams open in this process (tests, and a look at what the console holds). */
export const openLiveStreams = () => streams.count();

/** The key a viewer's streams are counted under: the user or token; null with sign-in off (everyone is the same viewer). */
export function liveOwner(who: Principal): string | null {
  if (who.via === 'off' || who.kind === 'anonymous') return null;
  return `${who.kind}:${who.userId ?? who.tokenId ?? who.name}`;
}

/**
 * Null when a stream may open; else what the asker gets (a page polls instead): a 503 when
 * the process serves MAX_LIVE_STREAMS already (the server's limit), a 429 when this viewer
 * holds MAX_LIVE_STREAMS_PER_VIEWER of them (the asker's: other viewers still get theirs) —
 * with the seconds until the first of those streams has ended at the latest (Retry-After):
 * every stream ends by its LIVE_MAX_MS, so a place is free by then, sooner if one closes.
 */
export function liveRoomRefusal(owner: string | null = null): { error: QueueError; retryAfterS: number } | null {
  if (streams.count() >= MAX_LIVE_STREAMS) {
    return { error: new QueueError('unavailable', `this console serves ${MAX_LIVE_STREAMS} live streams already; poll instead`), retryAfterS: streams.retryAfterS() };
  }
  if (owner !== null && streams.count(owner) >= MAX_LIVE_STREAMS_PER_VIEWER) {
    return {
      error: new QueueError('rate_limited', `you hold ${MAX_LIVE_STREAMS_PER_VIEWER} live streams on this console already; poll instead`),
      retryAfterS: streams.retryAfterS(owner),
    };
  }
  return null;
}

const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

export function liveStream(topics: readonly LiveTopic[], o: LiveOptions): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let close = () => {};
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // Runs inside the ReadableStream constructor: nothing can open a stream between
        // the route's liveRoomRefusal and this count.
        const release = streams.take(o.owner ?? null, o.maxMs + o.everyMs);
        const startedAt = performance.now();
        close = () => {
          if (closed) return;
          closed = true;
          release();
          clearTimeout(timer);
          o.signal?.removeEventListener('abort', close);
          try {
            controller.close();
          } catch {
            // already closed by the consumer
          }
        };
        if (o.signal?.aborted) return close();
        o.signal?.addEventListener('abort', close);
        let head = `retry: ${LIVE_RETRY_MS}\n\n`;

        const tick = async () => {
          if (closed) return;
          const began = performance.now();
          // Skip a reader that is behind: the next event carries the newest state anyway.
          let nextMs = o.everyMs;
          if (head || (controller.desiredSize ?? 1) > 0) {
            const events = await Promise.all(
              topics.map(async (t) => {
                try {
                  const value = await t.read();
                  const within = t.nextWithinMs?.(value);
                  if (typeof within === 'number') nextMs = Math.min(nextMs, within);
                  return frame(t.event, value);
                } catch (err) {
                  return frame('problem', toQueueError(err).toJSON());
                }
              }),
            );
            if (closed) return;
            controller.enqueue(encoder.encode(head + events.join('')));
            head = '';
          }
          if (performance.now() - startedAt >= o.maxMs) {
            controller.enqueue(encoder.encode(frame('bye', { reason: 'reconnect' })));
            return close();
          }
          timer = setTimeout(run, Math.max(0, nextMs - (performance.now() - began)));
        };
        // Nothing a tick throws may leave the stream open and silent: it ends, and the page
        // polls (what a closed stream makes it do).
        const run = () =>
          void tick().catch((err) => {
            log.error('a live stream failed; it ends and its page polls', { err });
            close();
          });
        run();
      },
      cancel() {
        close();
      },
    },
    // One pending event at most: a reader that has not taken it is behind.
    { highWaterMark: 1, size: () => 1 },
  );
}
