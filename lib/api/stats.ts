import { queryOptions } from '@tanstack/react-query';
import { api } from './client';
import { statsKeys } from './keys';
import type { StatsDto, StatsHistoryDto } from './types';

export type { StatsDto, StatsHistoryDto };

/** The ranges of the stats record the overview offers (lib/queue/history.ts HISTORY_RANGES). */
export type HistoryRange = StatsHistoryDto['range'];

/** The workers' counters over a range, from the record the recover sweep keeps: it gains a sample a minute. */
export const statsHistoryQuery = (range: HistoryRange, enabled = true) =>
  queryOptions({
    queryKey: [...statsKeys.all, 'history', range] as const,
    queryFn: ({ signal }) => api<StatsHistoryDto>(`/api/stats/history?range=${range}`, { signal }),
    refetchInterval: 60_000,
    enabled,
  });

/** How soon a page asks again for stats that were served old (statsRefetchMs). */
export const OLD_SNAPSHOT_REASK_MS = 1_000;

/**
 * When to ask for the stats again: every `refetchMs`, but within a second while the last
 * answer was an old snapshot — three refresh intervals old or more when served (dbNow −
 * computedAt, both the database's clock), which the server gives the first viewer after a
 * quiet spell while it reads a fresh one (lib/queue/stats-cache.ts). A page polling every
 * 15 s (the jobs list, the schedules) showed that old one, and what it implied — no worker
 * alive, for a console started before its workers — for a whole poll. The live feed's
 * stats event follows the same rule (app/api/live/route.ts).
 */
export function statsRefetchMs(refetchMs: number | false, last: { dbNow: string | Date; computedAt: string | Date; refreshMs: number } | undefined): number | false {
  if (refetchMs === false || !last) return refetchMs;
  // As answered (ISO text) or as read on the server (Dates: the live feed, lib/server/live.ts).
  const servedAgeMs = new Date(last.dbNow).getTime() - new Date(last.computedAt).getTime();
  return servedAgeMs >= 3 * last.refreshMs ? Math.min(refetchMs, OLD_SNAPSHOT_REASK_MS) : refetchMs;
}

export const statsQuery = (refetchMs: number | false = 2000) =>
  queryOptions({
    queryKey: statsKeys.all,
    // Its dbNow is the database clock at the answer (the snapshot's time plus its age): when
    // the overview polls instead of streaming, it keeps the browser's clock offset right.
    queryFn: ({ signal }) => api<StatsDto>('/api/stats', { signal, clock: true }),
    refetchInterval: (query) => statsRefetchMs(refetchMs, query.state.data),
  });

export const enqueueJob = (body: unknown) => api<{ id: string; created: boolean }>('/api/jobs', { method: 'POST', json: body });
