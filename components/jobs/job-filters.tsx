'use client';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { filterKey, jobIdFromText, type JobFilters } from '@/lib/api/filters';
import { DEFAULT_PRIORITY, LAST_PRIORITY } from '@/lib/api/priority';
import { JOB_STATUSES, type JobStatus } from '@/lib/api/statuses';
import { SINCE_PRESETS, sinceText } from '@/lib/since';
import { Button } from '../ui/button';

// A value typed (applied or not) in the text colour, the placeholder ("any") fainter, in both
// themes: inherited from the label, a value was dimmer than the placeholders in the dark one.
const input =
  'w-full rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm text-zinc-900 placeholder:text-zinc-400 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100 dark:placeholder:text-zinc-600';

export interface JobFiltersProps {
  filters: JobFilters;
  onChange(f: JobFilters): void;
  queues?: string[];
  types?: string[];
  /** Hide the status field (the dead letter is always `failed`). */
  fixedStatus?: JobStatus;
  /** Told whether the bar holds changes not applied yet (the list and its actions still use the applied filters). */
  onPendingChange?(pending: boolean): void;
}


/**
 * The search box: a job id (`4211`, `#4211`), or text in the last error (`timeout`); text
 * in double quotes is always error text, so a number can be searched for too (`"503"`).
 */
export function parseSearch(text: string): { id?: string; error?: string } {
  const s = text.trim();
  const quoted = /^"(.+)"$/.exec(s);
  if (quoted) return { error: quoted[1] };
  const id = jobIdFromText(s);
  if (id) return { id };
  return s ? { error: s } : {};
}

/** What the search box shows for these filters (parseSearch's inverse). */
export const searchText = (f: Pick<JobFilters, 'id' | 'error'>) => f.id ?? (f.error && jobIdFromText(f.error.trim()) ? `"${f.error}"` : f.error) ?? '';

/** The filter bar; applies on Enter or on "Apply", and a status change at once. */
export function JobFilterBar({ filters, onChange, queues = [], types = [], fixedStatus, onPendingChange }: JobFiltersProps) {
  const [draft, setDraft] = useState(filters);
  const [search, setSearch] = useState(searchText(filters));
  useEffect(() => {
    setDraft(filters);
    setSearch(searchText(filters));
  }, [filters]);
  // Typed before the page hydrated (a slow load, a fast operator): the box shows the text but
  // React's state never saw it, so "not applied yet" stayed silent and Apply ignored it. Adopt
  // what the boxes hold once, on mount (against what the server rendered).
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    const box = (name: string) => form.current?.querySelector<HTMLInputElement>(`input[data-field="${name}"]`)?.value ?? '';
    const early: Partial<JobFilters> = {};
    for (const k of ['queue', 'type', 'worker', 'payload'] as const) if (box(k) !== (filters[k] ?? '')) early[k] = box(k) || undefined;
    if (Object.keys(early).length) setDraft((d) => ({ ...d, ...early }));
    if (box('search') !== searchText(filters)) setSearch(box('search'));
  }, []);
  const typed = (patch: Partial<JobFilters> = {}) => clean({ ...draft, ...patch, id: undefined, error: undefined, ...parseSearch(search) });
  const submit = (e?: FormEvent, patch: Partial<JobFilters> = {}) => {
    e?.preventDefault();
    onChange(typed(patch));
  };
  // Typed but not applied: the list, and an action on "every job matching", still use the
  // applied filters — said here, and told to the list, so nobody acts on a filter they only
  // see (the que-web accident: a bulk delete that took the filter before the one on screen).
  // Against what the bar showed for the applied filters (the search box holds an id or error
  // text, not both): a link the box cannot show in full is not "typed" before anyone typed.
  const shown = clean({ ...filters, id: undefined, error: undefined, ...parseSearch(searchText(filters)) });
  const pending = JSON.stringify(filterKey(typed())) !== JSON.stringify(filterKey(shown));
  useEffect(() => onPendingChange?.(pending), [pending, onPendingChange]);
  const set = (k: keyof JobFilters) => (e: { target: { value: string } }) => setDraft({ ...draft, [k]: e.target.value || undefined });
  // On a phone the search and the status come first, the rest behind "More filters": the
  // whole bar filled the first screen, the rows below it.
  const [more, setMore] = useState(false);
  const secondary = `${more ? 'flex' : 'hidden'} flex-col gap-1 text-xs text-zinc-500 md:flex`;
  const moreApplied = SECONDARY_FIELDS.filter((k) => !!filters[k]).length;
  return (
    <form ref={form} onSubmit={submit} className="grid grid-cols-2 gap-2 rounded-lg border border-zinc-200 bg-white p-3 md:grid-cols-4 lg:grid-cols-10 dark:border-zinc-800 dark:bg-zinc-900" aria-label="Filters">
      <label className="col-span-2 flex flex-col gap-1 text-xs text-zinc-500">
        Search (job id or error text; a number in quotes is error text)
        <input id="job-search" data-field="search" className={input} value={search} onChange={(e) => setSearch(e.target.value)} placeholder='e.g. 4211, timeout or "503"' maxLength={200} />
      </label>
      {!fixedStatus && (
        <label className="flex flex-col gap-1 text-xs text-zinc-500">
          Status
          <select
            className={input}
            value={draft.status ?? ''}
            aria-label="Status"
            onChange={(e) => submit(undefined, { status: (e.target.value || undefined) as JobStatus | undefined })}
          >
            <option value="">any</option>
            {JOB_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      )}
      {!fixedStatus && (
        <label className={secondary}>
          Due
          <select
            className={input}
            value={draft.due ?? ''}
            aria-label="Due"
            title="waiting (queued or retrying) jobs by when they are due"
            onChange={(e) => submit(undefined, { due: (e.target.value || undefined) as JobFilters['due'] })}
          >
            <option value="">any</option>
            <option value="now">now (waiting for a worker)</option>
            <option value="later">later (scheduled, or a retry backing off)</option>
          </select>
        </label>
      )}
      <label className={secondary}>
        Attempts
        <select
          className={input}
          value={draft.minAttempts ?? ''}
          aria-label="Attempts"
          title="jobs claimed at least this many times: those that needed more than one try"
          onChange={(e) => submit(undefined, { minAttempts: e.target.value || undefined })}
        >
          <option value="">any</option>
          {MIN_ATTEMPTS_PRESETS.map((n) => (
            <option key={n} value={n}>
              {n} or more
            </option>
          ))}
          {/* A value from a link that is not a preset (7): shown as it reads. */}
          {draft.minAttempts && !MIN_ATTEMPTS_PRESETS.includes(draft.minAttempts) && <option value={draft.minAttempts}>{draft.minAttempts} or more</option>}
        </select>
      </label>
      <label className={secondary}>
        Priority
        <select
          className={input}
          value={draft.priority ?? ''}
          aria-label="Priority"
          title="jobs of one priority: 0 runs first, 9 last"
          onChange={(e) => submit(undefined, { priority: e.target.value || undefined })}
        >
          <option value="">any</option>
          {Array.from({ length: LAST_PRIORITY + 1 }, (_, p) => (
            <option key={p} value={String(p)}>
              {p}
              {p === DEFAULT_PRIORITY ? ' (the default)' : ''}
            </option>
          ))}
        </select>
      </label>
      <label className={secondary}>
        Time
        <select
          className={input}
          value={timeValue(draft)}
          aria-label="Time"
          title="enqueued or finished within a window that moves with the clock (the database's), or since a moment given in the address"
          onChange={(e) => submit(undefined, timeFilter(e.target.value))}
        >
          <option value="">any</option>
          {(['createdSince', 'finishedSince'] as const).map((key) => (
            <optgroup key={key} label={key === 'createdSince' ? 'enqueued' : 'finished'}>
              {SINCE_PRESETS.map(([v]) => (
                <option key={v} value={`${key}:${v}`}>
                  {key === 'createdSince' ? 'enqueued' : 'finished'} {sinceText(v)}
                </option>
              ))}
              {/* A value from a link that is not a preset (a moment, 90m): shown as it reads. */}
              {draft[key] && !SINCE_PRESETS.some(([v]) => v === draft[key]) && (
                <option value={`${key}:${draft[key]}`}>
                  {key === 'createdSince' ? 'enqueued' : 'finished'} {sinceText(draft[key]!)}
                </option>
              )}
            </optgroup>
          ))}
        </select>
      </label>
      <label className={secondary}>
        Queue
        <input className={input} list="filter-queues" data-field="queue" value={draft.queue ?? ''} onChange={set('queue')} placeholder="any" maxLength={200} aria-label="Queue" />
        <datalist id="filter-queues">
          {queues.map((q) => (
            <option key={q} value={q} />
          ))}
        </datalist>
      </label>
      <label className={secondary}>
        Type
        <input className={input} list="filter-types" data-field="type" value={draft.type ?? ''} onChange={set('type')} placeholder="any" maxLength={200} aria-label="Type" />
        <datalist id="filter-types">
          {types.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
      </label>
      <label className={secondary}>
        Worker
        <input className={input} data-field="worker" value={draft.worker ?? ''} onChange={set('worker')} placeholder="any" maxLength={300} aria-label="Worker" />
      </label>
      <label className={secondary}>
        Payload
        <input className={input} data-field="payload" value={draft.payload ?? ''} onChange={set('payload')} placeholder="key or a.b=value" maxLength={200} aria-label="Payload" />
      </label>
      <div className="col-span-2 flex flex-wrap items-end gap-2 md:col-span-4 lg:col-span-10">
        <Button type="submit" variant="primary" size="sm">
          Apply filters
        </Button>
        <Button size="sm" variant="ghost" className="md:hidden" aria-expanded={more} onClick={() => setMore(!more)} data-testid="more-filters">
          {more ? 'Fewer filters' : `More filters${moreApplied ? ` (${moreApplied} applied)` : ''}`}
        </Button>
        <Button
          size="sm"
          variant="ghost"
          onClick={() => {
            const none: JobFilters = fixedStatus ? { status: fixedStatus } : {};
            // The bar too: when no filter was applied, the address does not change and would not reset it.
            setDraft(none);
            setSearch('');
            onChange(none);
          }}
        >
          Clear filters
        </Button>
        {pending && (
          <span role="status" data-testid="filters-pending" className="text-xs text-amber-800 dark:text-amber-300">
            Not applied yet: the list and its actions use the filters as they were — Apply filters (or Enter) first.
          </span>
        )}
        {filters.fingerprint && (
          <span className="inline-flex items-center gap-1 rounded bg-zinc-100 px-2 py-0.5 text-xs dark:bg-zinc-800">
            error group <code>{filters.fingerprint}</code>
            <button type="button" aria-label="Remove the error group filter" onClick={() => onChange({ ...filters, fingerprint: undefined })}>
              ✕
            </button>
          </span>
        )}
      </div>
    </form>
  );
}

/** The filters behind "More filters" on a small screen (all but the search and the status). */
const SECONDARY_FIELDS = ['queue', 'type', 'worker', 'payload', 'due', 'minAttempts', 'priority', 'createdSince', 'finishedSince'] as const;

/** The Attempts select's choices: more than one try, and the counts a retry policy reaches. */
const MIN_ATTEMPTS_PRESETS = ['2', '3', '5', '10'];

/** The Time select's value for these filters: "createdSince:1h", or "" for none (one of the two at a time). */
function timeValue(f: JobFilters): string {
  if (f.finishedSince) return `finishedSince:${f.finishedSince}`;
  if (f.createdSince) return `createdSince:${f.createdSince}`;
  return '';
}

/** The filters a Time choice sets: one of the two, the other cleared. */
function timeFilter(value: string): Pick<JobFilters, 'createdSince' | 'finishedSince'> {
  const at = value.indexOf(':');
  const key = value.slice(0, at);
  const v = value.slice(at + 1) || undefined;
  return { createdSince: key === 'createdSince' ? v : undefined, finishedSince: key === 'finishedSince' ? v : undefined };
}

function clean(f: JobFilters): JobFilters {
  const out: JobFilters = {};
  for (const [k, v] of Object.entries(f)) if (typeof v === 'string' && v.trim()) (out as Record<string, string>)[k] = v.trim();
  return out;
}
