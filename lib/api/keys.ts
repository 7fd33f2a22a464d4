/**
 * TanStack Query keys: hierarchical factories (general → specific), so invalidating
 * `jobKeys.all` refreshes every job view and `jobKeys.lists()` every list and nothing else.
 */
export const jobKeys = {
  all: ['jobs'] as const,
  lists: () => [...jobKeys.all, 'list'] as const,
  list: (filters: Record<string, string | undefined>) => [...jobKeys.lists(), filters] as const,
  lookups: () => [...jobKeys.all, 'lookup'] as const,
  lookup: (ids: readonly string[]) => [...jobKeys.lookups(), ids] as const,
  newer: (filters: Record<string, string | undefined>, after: string | null) => [...jobKeys.all, 'newer', filters, after] as const,
  details: () => [...jobKeys.all, 'detail'] as const,
  detail: (id: string) => [...jobKeys.details(), id] as const,
};
export const statsKeys = { all: ['stats'] as const };
export const workerKeys = { all: ['workers'] as const };
export const scheduleKeys = { all: ['schedules'] as const };
export const deadLetterKeys = { all: ['dead-letter'] as const };
export const consoleKeys = { meta: ['console', 'meta'] as const };
export const actionKeys = { all: ['actions'] as const };
export const viewKeys = { all: ['views'] as const, page: (page: string) => [...viewKeys.all, page] as const };
