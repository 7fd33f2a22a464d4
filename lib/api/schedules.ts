import { queryOptions } from '@tanstack/react-query';
import { api } from './client';
import { scheduleKeys } from './keys';
import type { SchedulesDto } from './types';

export const schedulesQuery = (refetchMs: number | false) =>
  queryOptions({
    queryKey: scheduleKeys.all,
    queryFn: ({ signal }) => api<SchedulesDto>('/api/schedules', { signal, clock: true }),
    refetchInterval: refetchMs,
  });
