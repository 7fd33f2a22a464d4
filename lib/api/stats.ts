import { queryOptions } from '@tanstack/react-query';
import type { statsDto } from '../http/dto';
import { api } from './client';
import { statsKeys } from './keys';

export type StatsDto = ReturnType<typeof statsDto>;

export const statsQuery = (refetchMs: number | false = 1000) =>
  queryOptions({
    queryKey: statsKeys.all,
    queryFn: () => api<StatsDto>('/api/stats'),
    refetchInterval: refetchMs,
  });

export const enqueueJob = (body: unknown) => api<{ id: string; created: boolean }>('/api/jobs', { method: 'POST', json: body });
