/**
 * The live feed in the browser (GET /api/live, lib/server/live.ts): one EventSource per
 * page for what it watches, whose events land in the same TanStack Query entries the
 * polling queries fill. While it delivers, those queries stop polling; when it breaks or
 * reports a problem they poll again (and show the error where they always have), and the
 * feed is tried again a little later. Paused refresh (hidden tab, selection, the pause
 * button) closes it, like any poll.
 */
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { filtersToQuery, filterKey, type JobFilters } from './filters';
import { jobKeys, statsKeys } from './keys';

export interface LiveWatch {
  /** The overview's numbers (statsQuery). */
  stats?: boolean;
  /** The rows shown on a jobs page (jobLookupQuery). */
  ids?: readonly string[];
  /** The "N new" count above a jobs page (jobNewerQuery). */
  newer?: { filters: JobFilters; after: string | null };
}

/** After a broken feed, the page polls for this long before it tries the feed again. */
export const FALLBACK_MS = 10_000;

export function liveUrl(w: LiveWatch, everyMs: number): string | null {
  const extra: Record<string, string | undefined> = { stats: w.stats ? '1' : undefined, ids: w.ids?.join(',') || undefined };
  if (w.newer?.after) extra.after = w.newer.after;
  if (!extra.stats && !extra.ids && !extra.after) return null;
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
    if (!url) return;
    const source = new EventSource(url);
    let again: ReturnType<typeof setTimeout> | undefined;
    const into = (key: readonly unknown[]) => (m: MessageEvent<string>) => {
      qc.setQueryData(key, JSON.parse(m.data));
      setLive(true);
    };
    source.addEventListener('stats', into(statsKeys.all));
    if (w.ids?.length) source.addEventListener('lookup', into(jobKeys.lookup(w.ids)));
    if (w.newer?.after) source.addEventListener('newer', into(jobKeys.newer(filterKey(w.newer.filters), w.newer.after)));
    const end = (waitMs: number) => {
      source.close();
      setLive(false);
      clearTimeout(again);
      again = setTimeout(() => setAttempt((n) => n + 1), waitMs);
    };
    // A planned end: the next stream passes the sign-in check again.
    source.addEventListener('bye', () => end(0));
    source.addEventListener('problem', () => end(FALLBACK_MS));
    source.onerror = () => end(FALLBACK_MS);
    return () => {
      source.close();
      clearTimeout(again);
      setLive(false);
    };
    // `url` carries everything of `w` the effect reads.
  }, [url, attempt, qc]);
  return live;
}
