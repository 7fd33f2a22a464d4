import { queryOptions } from '@tanstack/react-query';
import { api } from './client';
import { statsKeys } from './keys';
import type { StatsDto, StatsHistoryDto } from './types';
import { statsRefetchMs } from '../ui/snapshot-age';

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

export const statsQuery = (refetchMs: number | false = 2000) =>
  queryOptions({
    queryKey: statsKeys.all,
    // Its dbNow is the database clock at the answer (the snapshot's time plus its age): when
    // the overview polls instead of streaming, it keeps the browser's clock offset right.
    queryFn: ({ signal }) => api<StatsDto>('/api/stats', { signal, clock: true }),
    refetchInterval: (query) => statsRefetchMs(refetchMs, query.state.data),
  });

export const enqueueJob = (body: unknown) => api<{ id: string; created: boolean }>('/api/jobs', { method: 'POST', json: body });
