/** Job reads for the console: pages, live row lookups, the "N new" count, one job. */
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { api } from './client';
import { filterKey, filtersToQuery, type JobFilters } from './filters';
import { jobKeys } from './keys';
import type { JobDetailDto, JobPageDto, JobRow } from './types';

export const PAGE_SIZE = 50;

export const jobPagesQuery = (filters: JobFilters) =>
  infiniteQueryOptions({
    queryKey: jobKeys.list(filterKey(filters)),
    queryFn: ({ pageParam, signal }) =>
      api<JobPageDto>(`/api/jobs?${filtersToQuery(filters, { cursor: pageParam ?? undefined, limit: String(PAGE_SIZE) })}`, { signal, clock: true }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    // The pages are a snapshot: rows refresh in place through jobLookupQuery and new
    // jobs are announced by jobNewerQuery, so nothing reshuffles under the cursor.
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });

/**
 * The first page read now (`fresh=1`), not answered from the second every viewer of the
 * console shares: what "Show N new" loads, since the count announcing those jobs may be
 * newer than the shared page.
 */
export const freshJobPage = (filters: JobFilters) =>
  api<JobPageDto>(`/api/jobs?${filtersToQuery(filters, { limit: String(PAGE_SIZE), fresh: '1' })}`, { clock: true });

export const jobLookupQuery = (ids: readonly string[], refetchMs: number | false) =>
  queryOptions({
    queryKey: jobKeys.lookup(ids),
    queryFn: ({ signal }) => api<{ jobs: JobRow[]; dbNow: string }>(`/api/jobs/lookup?ids=${ids.join(',')}`, { signal, clock: true }),
    enabled: ids.length > 0,
    refetchInterval: refetchMs,
    staleTime: 0,
  });

export const jobNewerQuery = (filters: JobFilters, after: string | null, refetchMs: number | false) =>
  queryOptions({
    queryKey: jobKeys.newer(filterKey(filters), after),
    queryFn: ({ signal }) => api<{ count: number; capped: boolean }>(`/api/jobs/newer?${filtersToQuery(filters, { after: after ?? undefined })}`, { signal }),
    enabled: after !== null,
    refetchInterval: refetchMs,
  });

/** The job as it changes, without its payload (read once: jobPayloadQuery), as the live feed sends it. */
export const jobDetailQuery = (id: string, refetchMs: number | false) =>
  queryOptions({
    queryKey: jobKeys.detail(id),
    queryFn: ({ signal }) => api<JobDetailDto>(`/api/jobs/${encodeURIComponent(id)}?payload=0`, { signal, clock: true }),
    refetchInterval: refetchMs,
    retry: (n, err) => (err as { status?: number }).status !== 404 && n < 1,
  });

/** A job's payload, exactly as stored: read once, it never changes after the enqueue. */
export const jobPayloadQuery = (id: string) =>
  queryOptions({
    queryKey: [...jobKeys.detail(id), 'payload'] as const,
    queryFn: async ({ signal }) => (await api<JobDetailDto>(`/api/jobs/${encodeURIComponent(id)}`, { signal })).payloadText ?? '',
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    retry: (n, err) => (err as { status?: number }).status !== 404 && n < 1,
  });

/** POST /api/jobs/:id/copy: a new job of the job's type; fields left out are the original's. */
export const rescheduleJob = (id: string, body: { runAt?: string; priority?: number; reason?: string }) =>
  api<unknown>(`/api/jobs/${encodeURIComponent(id)}/reschedule`, { method: 'POST', json: body });

export const copyJob = (id: string, body: { payload?: unknown; queue?: string; priority?: number; reason?: string }) =>
  api<{ id: string; created: true; copyOf: string }>(`/api/jobs/${encodeURIComponent(id)}/copy`, { method: 'POST', json: body });
