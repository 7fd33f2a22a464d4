/**
 * The live feed in the browser (GET /api/live, lib/server/live.ts): one EventSource per
 * page for what it watches, whose events land in the same TanStack Query entries the
 * polling queries fill. While it delivers, those queries stop polling; when it breaks or
 * reports a problem they poll again (and show the error where they always have), and the
 * feed is tried again a little later. Paused refresh (a hidden tab, the pause button)
 * closes it, like any poll.
 */
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { noteServerTime } from './clock';
import { filtersToQuery, filterKey, type JobFilters } from './filters';
import { auditQuery } from './audit';
import { jobKeys, statsKeys, workerKeys } from './keys';

export interface LiveWatch {
  /** The overview's numbers (statsQuery). */
  stats?: boolean;
  /** The rows shown on a jobs page (jobLookupQuery). */
  ids?: readonly string[];
  /** The "N new" count above a jobs page (jobNewerQuery). */
  newer?: { filters: JobFilters; after: string | null };
  /** A job's page: the job with its attempts (jobDetailQuery) and its audit entries (auditQuery). */
  job?: string;
  /** The workers page (workersQuery). */
  workers?: boolean;
}

/** After a broken feed, the page polls for this long before it tries the feed again. */
export const FALLBACK_MS = 10_000;

/**
 * Streams one browser keeps open to the console at most. A browser allows six HTTP/1.1
 * connections to a host (`next start` speaks HTTP/1.1), and a stream holds one for as
 * long as it is open: with six console windows streaming, a click in any of them would
 * wait for a stream to end. Hidden tabs close theirs already; past this many visible
 * ones, a page polls instead. Counted with the Web Locks API, which a tab's closing
 * releases; where it is missing (plain http to a host other than localhost) a page streams.
 */
export const STREAMS_PER_BROWSER = 3;

/** One of the browser's stream slots, or null when all are taken; its release frees it. */
async function takeSlot(): Promise<(() => void) | null> {
  const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
  if (!locks) return () => {};
  for (let k = 0; k < STREAMS_PER_BROWSER; k++) {
    const release = await new Promise<(() => void) | null>((granted) => {
      locks
        .request(`leasehold-live-${k}`, { ifAvailable: true }, (lock) => {
          if (!lock) return granted(null);
          // Held until released: the callback's promise settles then.
          return new Promise<void>((done) => granted(done));
        })
        // Locks refused (a sandboxed frame): stream without a slot, as where there are none.
        .catch(() => granted(() => {}));
    });
    if (release) return release;
  }
  return null;
}

export function liveUrl(w: LiveWatch, everyMs: number): string | null {
  const extra: Record<string, string | undefined> = {
    stats: w.stats ? '1' : undefined,
    ids: w.ids?.join(',') || undefined,
    job: w.job || undefined,
    workers: w.workers ? '1' : undefined,
  };
  if (w.newer?.after) extra.after = w.newer.after;
  if (!extra.stats && !extra.ids && !extra.after && !extra.job && !extra.workers) return null;
  const filters = extra.after ? w.newer!.filters : {};
  return `/api/live?${filtersToQuery(filters, { ...extra, every: String(everyMs) })}`;
}

/** Opens the feed for `w` while refresh runs; true while it delivers (the queries then need not poll). */
export function useLive(w: LiveWatch, interval: number | false): boolean {
  const qc = useQueryClient();
  const url = interval === false || typeof EventSource === 'undefined' ? null : liveUrl(w, interval);
  const [live, setLive] = useState(false);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (!url || interval === false) return;
    const everyMs = interval;
    let source: { close(): void } | null = null;
    let release: (() => void) | null = null;
    let again: ReturnType<typeof setTimeout> | undefined;
    let gone = false;
    const retryLater = (waitMs: number) => {
      clearTimeout(again);
      again = setTimeout(() => setAttempt((n) => n + 1), waitMs);
    };
    const open = (at: string) => {
      const es = new EventSource(at);
      const openedAt = Date.now();
      let timed = false;
      let watchdog: ReturnType<typeof setTimeout> | undefined;
      // A stream that goes quiet without an error (a laptop's sleep, a network change, a
      // proxy that buffers) must not leave the page on old data with its polling off.
      const quiet = () => {
        clearTimeout(watchdog);
        watchdog = setTimeout(() => end(0), 2 * everyMs + 5_000);
      };
      const into = (key: readonly unknown[]) => (m: MessageEvent<string>) => {
        const data = JSON.parse(m.data);
        // The first event of a stream was read after it was asked for: its database clock
        // is a sample for the browser's clock offset, like a request's (lib/api/clock.ts).
        if (!timed) noteServerTime((data as { dbNow?: string }).dbNow, openedAt, Date.now());
        timed = true;
        qc.setQueryData(key, data);
        setLive(true);
        quiet();
      };
      es.addEventListener('stats', into(statsKeys.all));
      if (w.ids?.length) es.addEventListener('lookup', into(jobKeys.lookup(w.ids)));
      if (w.newer?.after) es.addEventListener('newer', into(jobKeys.newer(filterKey(w.newer.filters), w.newer.after)));
      if (w.job) {
        es.addEventListener('job', into(jobKeys.detail(w.job)));
        es.addEventListener('audit', into(auditQuery({ jobId: w.job }).queryKey));
      }
      if (w.workers) es.addEventListener('workers', into(workerKeys.all));
      /** Closes the stream and frees its slot; then tries again after `againMs` (null: never, the page is leaving). */
      const end = (againMs: number | null) => {
        clearTimeout(watchdog);
        es.close();
        release?.();
        release = null;
        if (againMs === null) return;
        setLive(false);
        retryLater(againMs);
      };
      // A planned end: the next stream passes the sign-in check again.
      es.addEventListener('bye', () => end(0));
      es.addEventListener('problem', () => end(FALLBACK_MS));
      es.onerror = () => end(FALLBACK_MS);
      quiet();
      return { close: () => end(null) };
    };
    void takeSlot().then((slot) => {
      if (gone) return slot?.();
      if (!slot) return retryLater(FALLBACK_MS); // every slot in use: poll meanwhile
      release = slot;
      source = open(url);
    });
    return () => {
      gone = true;
      source?.close();
      release?.();
      clearTimeout(again);
      setLive(false);
    };
    // `url` carries everything of `w` and `interval` the effect reads.
  }, [url, attempt, qc]);
  return live;
}
