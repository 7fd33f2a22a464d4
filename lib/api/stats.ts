import { queryOptions } from '@tanstack/react-query';
import { api } from './client';
import { statsKeys } from './keys';
import type { StatsDto } from './types';

export type { StatsDto };

export const statsQuery = (refetchMs: number | false = 2000) =>
  queryOptions({
    queryKey: statsKeys.all,
    // Its dbNow is the database clock at the answer (the snapshot's time plus its age): when
    // the overview polls instead of streaming, it keeps the browser's clock offset right.
    queryFn: ({ signal }) => api<StatsDto>('/api/stats', { signal, clock: true }),
    refetchInterval: refetchMs,
  });

export const enqueueJob = (body: unknown) => api<{ id: string; created: boolean }>('/api/jobs', { method: 'POST', json: body });
