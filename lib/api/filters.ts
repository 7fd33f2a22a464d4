/**
 * The jobs list's filters as they live in the URL (/jobs?status=failed&queue=emails…):
 * parsed leniently (an unknown status is dropped, not an error page) and written back in
 * a fixed order, so a filtered view is a link that survives a reload or a paste.
 */
import type { JobFilter } from '../queue/filters';
import { parseSince } from '../since';
import { LAST_PRIORITY } from './priority';
import { isJobStatus } from './statuses';

/** A job id as typed or linked: a positive integer of at most 19 digits (the API bounds it by a bigint). */
export const JOB_ID_TEXT = /^[1-9][0-9]{0,18}$/;

/** A job id as an operator types it, `#` allowed in front (as ids are shown); null when it is none. */
export function jobIdFromText(s: string): string | null {
  const bare = s.trim().replace(/^#/, '');
  return JOB_ID_TEXT.test(bare) ? bare : null;
}

/** A least number of attempts as typed or linked: 1-100, no leading zero (MAX_ATTEMPTS_LIMIT bounds a job's attempts). */
export const MIN_ATTEMPTS_TEXT = /^(?:[1-9][0-9]?|100)$/;

/** A priority as typed or linked: 0 to LAST_PRIORITY, in plain digits. */
export const PRIORITY_TEXT = new RegExp(`^(?:${Array.from({ length: LAST_PRIORITY + 1 }, (_, p) => p).join('|')})$`);

export const FILTER_FIELDS = ['status', 'queue', 'type', 'id', 'worker', 'error', 'payload', 'fingerprint', 'minAttempts', 'priority', 'due', 'createdSince', 'finishedSince'] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];

/**
 * The filters a URL holds: the server's filter (lib/queue/filters.ts, a type-only import, so
 * no database code reaches the browser) less the fields only the API's bulk actions send.
 */
export type JobFilters = Pick<JobFilter, FilterField>;

export function filtersFromParams(params: URLSearchParams | { get(name: string): string | null }): JobFilters {
  const f: JobFilters = {};
  for (const k of FILTER_FIELDS) {
    const v = params.get(k)?.trim();
    if (!v) continue;
    if (k === 'status') {
      if (isJobStatus(v)) f.status = v;
    } else if (k === 'id') {
      if (JOB_ID_TEXT.test(v)) f.id = v;
    } else if (k === 'fingerprint') {
      if (/^[0-9a-f]{12}$/.test(v)) f.fingerprint = v;
    } else if (k === 'minAttempts') {
      if (MIN_ATTEMPTS_TEXT.test(v)) f.minAttempts = v;
    } else if (k === 'priority') {
      if (PRIORITY_TEXT.test(v)) f.priority = v;
    } else if (k === 'due') {
      if (v === 'now' || v === 'later') f.due = v;
    } else if (k === 'createdSince' || k === 'finishedSince') {
      if (parseSince(v)) f[k] = v;
    } else f[k] = v.slice(0, 200);
  }
  // The API's free search (GET /api/jobs?q=): a job id, else text in the last error.
  const q = params.get('q')?.trim();
  if (q) {
    if (JOB_ID_TEXT.test(q)) f.id ??= q;
    else f.error ??= q.slice(0, 200);
  }
  return f;
}

/** Parameters of the jobs page that are not filters (the "/" shortcut's focus=search). */
const PAGE_PARAMS = new Set(['focus', 'q']);

/**
 * The filters in the address that filtersFromParams left out (a mistyped status, a
 * fingerprint cut short by a chat client): said on the page, since the list, and an action
 * on "every job matching", would otherwise quietly cover more jobs than the link meant.
 */
export function ignoredFilters(params: URLSearchParams | { get(name: string): string | null }): { name: string; value: string; why: string }[] {
  const kept = filtersFromParams(params);
  const why: Partial<Record<FilterField, string>> = {
    status: 'not a status',
    id: 'not a job id',
    fingerprint: 'not an error fingerprint (12 hex digits)',
    minAttempts: 'not a number of attempts (1-100)',
    priority: `not a priority (0-${LAST_PRIORITY})`,
    due: 'not now or later',
    createdSince: 'not a span back from now (15m, 1h, 24h, 7d) or an ISO 8601 moment',
    finishedSince: 'not a span back from now (15m, 1h, 24h, 7d) or an ISO 8601 moment',
  };
  const unread = FILTER_FIELDS.flatMap((name) => {
    const value = params.get(name)?.trim();
    return value && !kept[name] ? [{ name, value: value.slice(0, 80), why: why[name] ?? 'not understood' }] : [];
  });
  // A name the list does not know (search=, kind=, a misspelt statu=) filters nothing either.
  const names = 'keys' in params && typeof params.keys === 'function' ? [...new Set(params.keys())] : [];
  const unknown = names
    .filter((name) => !(FILTER_FIELDS as readonly string[]).includes(name) && !PAGE_PARAMS.has(name) && params.get(name)?.trim())
    .map((name) => ({ name: name.slice(0, 40), value: params.get(name)!.trim().slice(0, 80), why: 'not a filter of this list' }));
  return [...unread, ...unknown];
}

export function filtersToQuery(f: JobFilters, extra: Record<string, string | undefined> = {}): string {
  const p = new URLSearchParams();
  for (const k of FILTER_FIELDS) if (f[k]) p.set(k, f[k]!);
  for (const [k, v] of Object.entries(extra)) if (v) p.set(k, v);
  return p.toString();
}

export const hasFilters = (f: JobFilters) => FILTER_FIELDS.some((k) => !!f[k]);

/** The filter as a plain record (query keys). */
export const filterKey = (f: JobFilters): Record<string, string> => Object.fromEntries(FILTER_FIELDS.filter((k) => f[k]).map((k) => [k, f[k]!]));
