/** TanStack Query keys: hierarchical factories, so invalidating `jobKeys.all` refreshes every job view. */
export const jobKeys = {
  all: ['jobs'] as const,
  lists: () => [...jobKeys.all, 'list'] as const,
  list: (filters: Record<string, string | undefined>) => [...jobKeys.lists(), filters] as const,
  details: () => [...jobKeys.all, 'detail'] as const,
  detail: (id: string) => [...jobKeys.details(), id] as const,
};
export const statsKeys = { all: ['stats'] as const };
export const workerKeys = { all: ['workers'] as const };
