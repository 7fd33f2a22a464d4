/**
 * Saved views: which pages have them, the filters each page reads from its URL, and the
 * query string a view keeps. Shared by the server (which checks a view's query against its
 * page when it is saved) and the console (which saves the applied filters and marks the
 * view they equal): no server imports.
 */
import { FILTER_FIELDS, type FilterField, filtersFromParams, filtersToQuery } from '../api/filters';

export const VIEW_PAGES = ['jobs', 'dead-letter'] as const;
export type ViewPage = (typeof VIEW_PAGES)[number];

export const VIEW_PAGE_PATHS: Record<ViewPage, string> = { jobs: '/jobs', 'dead-letter': '/dead-letter' };

/** The filters each page reads from its URL (lib/api/filters.ts): the dead letter lists failed jobs only, so it takes no status. */
export const VIEW_PAGE_FILTERS: Record<ViewPage, readonly FilterField[]> = {
  jobs: FILTER_FIELDS,
  'dead-letter': FILTER_FIELDS.filter((k) => k !== 'status'),
};

/** Longest view name; most views per page; longest query string a view keeps. */
export const MAX_VIEW_NAME = 80;
export const MAX_VIEWS_PER_PAGE = 200;
export const MAX_VIEW_QUERY = 2_000;

/**
 * The page's applied filters as its URL carries them after a filter is applied (the filter
 * bar's order, filtersToQuery): what "Save current filters" saves, what the server stores
 * for a query it accepted, and what is compared to mark the active view — so a link with
 * the same filters in another order (or with the page's own focus=search) still marks it.
 */
export function viewQueryOf(page: ViewPage, params: URLSearchParams | { get(name: string): string | null }): string {
  const filters = filtersFromParams(params);
  return filtersToQuery(page === 'dead-letter' ? { ...filters, status: undefined } : filters);
}

/** The address a view opens. */
export const viewHref = (v: { page: ViewPage; query: string }) => (v.query ? `${VIEW_PAGE_PATHS[v.page]}?${v.query}` : VIEW_PAGE_PATHS[v.page]);
