import { queryOptions } from '@tanstack/react-query';
import { api } from './client';
import { consoleKeys } from './keys';
import type { ConsoleMeta } from './types';

export const consoleMetaQuery = () =>
  queryOptions({
    queryKey: consoleKeys.meta,
    queryFn: ({ signal }) => api<ConsoleMeta>('/api/console', { signal }),
    staleTime: 5 * 60_000,
  });
