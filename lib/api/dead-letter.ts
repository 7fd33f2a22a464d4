import { queryOptions } from '@tanstack/react-query';
import { api } from './client';
import { deadLetterKeys } from './keys';
import type { DeadLetterDto } from './types';

export const deadLetterQuery = (refetchMs: number | false) =>
  queryOptions({
    queryKey: deadLetterKeys.all,
    queryFn: ({ signal }) => api<DeadLetterDto>('/api/dead-letter', { signal }),
    refetchInterval: refetchMs,
  });
