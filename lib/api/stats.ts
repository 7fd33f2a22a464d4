import { queryOptions } from '@tanstack/react-query';
import { api } from './client';
import { statsKeys } from './keys';
import type { StatsDto } from './types';

export type { StatsDto };

export const statsQuery = (refetchMs: number | false = 2000) =>
  queryOptions({
    queryKey: statsKeys.all,
    queryFn: ({ signal }) => api<StatsDto>('/api/stats', { signal }),
    refetchInterval: refetchMs,
  });

export const enqueueJob = (body: unknown) => api<{ id: string; created: boolean }>('/api/jobs', { method: 'POST', json: body });
