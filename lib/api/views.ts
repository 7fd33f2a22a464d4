/** Saved views (GET/POST /api/views, DELETE /api/views/:id): named filters of /jobs and /dead-letter, shared by everyone. */
import { queryOptions } from '@tanstack/react-query';
import type { ViewPage } from '../views/pages';
import { api } from './client';
import { viewKeys } from './keys';
import type { SavedViewDto } from './types';

export const savedViewsQuery = (page: ViewPage) =>
  queryOptions({
    queryKey: viewKeys.page(page),
    queryFn: ({ signal }) => api<{ views: SavedViewDto[] }>(`/api/views?page=${page}`, { signal }),
    // Others' new views show when the menu is opened again (it refetches then), not on a timer.
    staleTime: 30_000,
  });

export const saveView = (v: { name: string; page: ViewPage; query: string }) => api<SavedViewDto>('/api/views', { method: 'POST', json: v });

export const deleteView = (id: string, reason?: string) => api<SavedViewDto>(`/api/views/${encodeURIComponent(id)}`, { method: 'DELETE', json: { reason } });
