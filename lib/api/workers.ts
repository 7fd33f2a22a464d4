import { queryOptions } from '@tanstack/react-query';
import { api } from './client';
import { workerKeys } from './keys';
import type { WorkersDto } from './types';

export const workersQuery = (refetchMs: number | false) =>
  queryOptions({
    queryKey: workerKeys.all,
    queryFn: ({ signal }) => api<WorkersDto>('/api/workers', { signal, clock: true }),
    refetchInterval: refetchMs,
  });
