'use client';
/**
 * The jobs list container (the Jobs page and the dead letter): keyset pages of the
 * filter, a live refresh of the rows on screen by id (rows stay where they are; one that
 * no longer matches is greyed, not removed), an "N new" banner instead of inserting rows,
 * selection (refresh goes on: selected rows update in place too), and actions on the selection or on every job
 * matching the filter.
 */
import { keepPreviousData, useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { JobTable, type TableJob } from '@/components/jobs/job-table';
import { NewRowsBanner, SelectionBar } from '@/components/jobs/list-banners';
import { Button } from '@/components/ui/button';
import { UserText } from '@/components/ui/user-text';
import { EmptyState, ErrorState } from '@/components/ui/states';
import { filterKey, hasFilters, type JobFilters } from '@/lib/api/filters';
import { freshJobPage, jobLookupQuery, jobNewerQuery, jobPagesQuery } from '@/lib/api/jobs';
import { useLive } from '@/lib/api/live';
import { jobKeys } from '@/lib/api/keys';
import { meQuery } from '@/lib/api/auth';
import { consoleMetaQuery } from '@/lib/api/console';
import { statsQuery } from '@/lib/api/stats';
import type { BulkAction, JobPageDto } from '@/lib/api/types';
import { SUSPECT_STREAK } from '@/lib/queue/job';
import { int, ms } from '@/lib/ui/format';
import { matchingCount } from '@/lib/ui/matching-count';
import { stillMatches } from '@/lib/ui/still-matches';
import { roleRefusal } from '@/lib/ui/role-gate';
import { useRefreshInterval } from '@/lib/ui/refresh';
import { useShortcuts } from '@/lib/ui/shortcuts';
import { rangeIds } from '@/lib/ui/range-select';
import { SWEEPING, sweepOf } from '@/lib/ui/sweep';
import { useDbNow } from '@/lib/ui/use-now';
import { useActionFlow } from '../action-flow';

const LOOKUP_MAX = 200;

export const describeFilter = (f: JobFilters) =>
  Object.entries(filterKey(f))
    .map(([k, v]) => `${k}=${v}`)
    .join(', ') || 'no filter';

/** What "N new" counts from: the newest id, or for the failed list the moment it was read. */
const anchorOf = (pages: readonly JobPageDto[]) => pages[0]?.newerAfter ?? pages[0]?.headId ?? null;
/** A list with nothing to count newer jobs from, or no row: its first page is read again each interval. */
const rereadsFirstPage = (pages: readonly JobPageDto[]) => anchorOf(pages) === null || pages.every((p) => p.jobs.length === 0);

export function JobsList({ filters, filtersPending, emptyHint }: { filters: JobFilters; filtersPending?: boolean; emptyHint?: React.ReactNode }) {
  const qc = useQueryClient();
  const interval = useRefreshInterval();
  const now = useDbNow();
  const flow = useActionFlow();
  const role = useQuery(meQuery()).data?.role;
  // A table with no job at all gives no anchor to count newer jobs from (nor a live feed to
  // follow), and an empty list has no row a new one could push from under the cursor: the
  // first page is read again each interval until a job shows, instead of "N new" above
  // "No job matches" (the running list between two bursts); so is a first read that failed.
  // The query's own poll, not a timer calling refetch(): that cancelled the read still
  // awaited for the next, and a first read is a poll too, so a server that hangs shows a poll
  // waiting (lib/api/connection.ts) — before, only the stats' every 15 s did, and the header
  // said "Live" for up to 48 s.
  const pages = useInfiniteQuery({
    ...jobPagesQuery(filters),
    refetchInterval: (q) => (interval && (!q.state.data || rereadsFirstPage(q.state.data.pages)) ? interval : false),
  });
  // Who recovers an expired lease: the live workers' sweep, unless none is alive or their
  // sweep has stopped (the shared stats snapshot, cached on the server for every viewer:
  // cheap to ask every 15 s).
  const stats = useQuery(statsQuery(interval && 15_000)); // not while refresh is paused
  const sweep = stats.data ? sweepOf(stats.data, now - ms(stats.data.computedAt)!) : SWEEPING;
  const cadence = useQuery(consoleMetaQuery()).data ?? null;
  const filteredQueue = filters.queue ? stats.data?.queues.find((q) => q.queue === filters.queue) : undefined;
  const matching = stats.data ? matchingCount(stats.data, filters) : null;
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  const lastClicked = useRef<string | null>(null);

  const fkey = JSON.stringify(filterKey(filters));
  useEffect(() => {
    setSelected(new Set());
    setAllMatching(false);
    lastClicked.current = null; // a shift-click on the new list has no anchor row yet
  }, [fkey]);

  // Each row carries when it was read, so a lease that ends after it shows as not seen (lease.tsx).
  const base: TableJob[] = useMemo(() => pages.data?.pages.flatMap((p) => p.jobs.map((j) => ({ ...j, readAt: p.dbNow }))) ?? [], [pages.data]);
  const anchor = pages.data ? anchorOf(pages.data.pages) : null;
  const ids = useMemo(() => base.slice(0, LOOKUP_MAX).map((j) => j.id), [base]);
  const live = useLive({ ids, newer: { filters, after: anchor } }, interval);
  // The ids change when older rows are loaded: meanwhile the last lookup stands in (its rows
  // stay as fresh as it was), or every row would flash back to its status as first loaded.
  const lookup = useQuery({ ...jobLookupQuery(ids, live ? false : interval), placeholderData: keepPreviousData });
  const newer = useQuery(jobNewerQuery(filters, anchor, live ? false : interval));
  const rows: TableJob[] = useMemo(() => {
    if (!lookup.data) return base;
    const fresh = new Map(lookup.data.jobs.map((j) => [j.id, j]));
    const readAt = lookup.data.dbNow;
    const readAtMs = Date.parse(readAt);
    return base.map((j, k) => {
      if (k >= LOOKUP_MAX) return j;
      // Read after this lookup (its first page read again for "Show N new" while the last
      // lookup stands in): as the page read it, not flashed back to the lookup's older state.
      if (j.readAt && Date.parse(j.readAt) > readAtMs) return j;
      const f = fresh.get(j.id);
      // Not in a stand-in lookup: a row it was not asked about (just loaded), not a gone one.
      if (!f) return lookup.isPlaceholderData ? j : { ...j, gone: true };
      return { ...f, readAt, gone: !stillMatches(filters, f, readAtMs) };
    });
  }, [base, lookup.data, lookup.isPlaceholderData, filters]);

  // The list starts over from a first page read now: the shared one may predate the count.
  // A "Load older" still in flight is cancelled first: finishing later, it would put the old
  // page chain back over the fresh page.
  const showNew = useCallback(() => {
    const queryKey = jobKeys.list(filterKey(filters));
    void freshJobPage(filters).then(
      async (page) => {
        await qc.cancelQueries({ queryKey });
        qc.setQueryData(queryKey, { pages: [page], pageParams: [null] });
        // The list starts over: a selection may name rows no longer on it, which an action
        // would still apply to.
        setSelected(new Set());
        setAllMatching(false);
        lastClicked.current = null;
      },
      () => qc.resetQueries({ queryKey }),
    );
  }, [qc, filters]);

  const onToggle = useCallback(
    (id: string, range: boolean) => {
      setAllMatching(false);
      setSelected((prev) => {
        const next = new Set(prev);
        // From the row last clicked, if it is still listed: with none (the list was replaced,
        // the selection cleared), a shift-click is a plain click, not a range from a row the
        // operator cannot see, nor nothing at all.
        const inRange = range && lastClicked.current !== null ? rangeIds(rows, lastClicked.current, id) : null;
        if (inRange) for (const x of inRange) next.add(x);
        else if (next.has(id)) next.delete(id);
        else next.add(id);
        lastClicked.current = id;
        return next;
      });
    },
    [rows],
  );
  const onToggleAll = useCallback((on: boolean) => {
    setAllMatching(false);
    // Not the greyed rows: they no longer match the view (a retrying job that started since
    // would be cancelled mid-run by "select all, Cancel"); each can still be ticked by hand.
    setSelected(on ? new Set(rows.filter((r) => !r.gone).map((r) => r.id)) : new Set());
    if (!on) lastClicked.current = null;
  }, [rows]);
  const clear = useCallback(() => {
    setSelected(new Set());
    setAllMatching(false);
    lastClicked.current = null;
  }, []);
  useShortcuts({ Escape: clear });

  const act = (action: BulkAction) => {
    const target = allMatching ? { filter: { ...filters } } : { ids: [...selected] };
    const label = allMatching ? `every job matching ${describeFilter(filters)}` : selected.size === 1 ? `job #${[...selected][0]}` : `${int(selected.size)} selected jobs`;
    flow.start({ action, target, label, onDone: () => clear() });
  };

  const last = pages.data?.pages[pages.data.pages.length - 1];
  // The rows and the "N new" count refresh apart from the pages: when that fails (the
  // database is away), the rows on screen are the last ones read, and the page says so.
  // A failed "Load older" is said beside its button, and a failed re-read of the pages above
  // the rows: the rows already loaded stay (replaced by the error, the list vanished while
  // its selection stayed).
  const refreshError = pages.data ? ((pages.isRefetchError ? pages.error : null) ?? lookup.error ?? newer.error) : null;
  return (
    <div className="space-y-3">
      {refreshError && <ErrorState title="Refreshing failed: the rows are as last read" message={refreshError.message} />}
      {/* An empty list reads its first page again instead (rereadsFirstPage): no banner above "No job matches". */}
      {newer.data && base.length > 0 && <NewRowsBanner count={newer.data.count} capped={newer.data.capped} onShow={showNew} />}
      {filteredQueue && (filteredQueue.controls?.paused || filteredQueue.workersAlive === 0) && (
        // A backlog that looks like any other: said here, as the job page says it, so nobody waits on a queue that nothing takes from.
        <p className="rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-200" data-testid="queue-notice">
          {filteredQueue.controls?.paused ? (
            <>
              Queue <UserText text={filteredQueue.queue} /> is paused: its waiting jobs stay queued until it is resumed (the overview's queue table, or{' '}
              <code>leasehold queue resume</code>)
              {filteredQueue.workersAlive === 0 ? (
                <>
                  ; and no live worker consumes it, so a resume alone runs nothing: start a worker with it in <code>--queues</code> too.
                </>
              ) : (
                '.'
              )}
            </>
          ) : (
            <>
              No live worker consumes queue <UserText text={filteredQueue.queue} />: its waiting jobs stay queued, their attempts unspent, until a worker starts
              with it in <code>--queues</code>.
            </>
          )}
        </p>
      )}
      {matching && !filtersPending && (
        <p className="text-sm text-zinc-500" data-testid="matching-count" title="from the overview's counts per status and queue (shared by every viewer, a few seconds old at most)">
          {matching}
        </p>
      )}
      <SelectionBar
        selectedCount={selected.size}
        allMatching={allMatching}
        canSelectAllMatching={hasFilters(filters)}
        filterText={describeFilter(filters)}
        filtersPending={filtersPending}
        onSelectAllMatching={() => setAllMatching(true)}
        onClear={clear}
        onAction={act}
        refusals={{ requeue: roleRefusal('requeue', role), cancel: roleRefusal('cancel', role), recover: roleRefusal('recover', role), delete: roleRefusal('delete', role) }}
      />
      {pages.isError && !pages.data ? (
        <ErrorState
          title="Cannot load jobs"
          message={pages.error.message}
          hint={pages.error.message.includes('busy') ? 'The search took too long: add a status, queue or type to the filter.' : 'Check the filters, or that the console reaches PostgreSQL.'}
          onRetry={() => void pages.refetch()}
        />
      ) : pages.isPending ? (
        <p className="text-zinc-500">Loading…</p>
      ) : rows.length === 0 && !last?.partial ? (
        <EmptyState title={hasFilters(filters) ? 'No job matches these filters' : 'No jobs yet'}>
          {emptyHint ??
            (hasFilters(filters) ? 'Loosen a filter or clear them all. Text search matches the last error; payload takes key or a.b=value.' : 'Enqueue one with POST /api/jobs or npx leasehold enqueue.')}
        </EmptyState>
      ) : (
        <>
          {rows.length > 0 && <JobTable rows={rows} nowMs={now} selected={selected} onToggle={onToggle} onToggleAll={onToggleAll} sweep={sweep} cadence={cadence} suspectStreak={SUSPECT_STREAK} />}
          {rows.length > LOOKUP_MAX && (
            <p className="text-sm text-zinc-500" data-testid="not-live-rows">
              The first {LOOKUP_MAX} rows refresh live; the {int(rows.length - LOOKUP_MAX)} below them are as they were loaded.
            </p>
          )}
          {last?.partial && (
            <p className="text-sm text-zinc-500" data-testid="partial-scan">
              Searched {int(last.partial.scannedIds)} job ids down to #{last.partial.scannedDownTo} so far (a filter no index serves is searched in
              slices, so no request runs long).
            </p>
          )}
          {pages.isFetchNextPageError && !pages.isFetchingNextPage && (
            <p className="text-sm text-red-700 dark:text-red-400" role="alert" data-testid="next-page-error">
              Could not load {last?.partial ? 'more' : 'older jobs'}: {pages.error?.message}. The rows above are as loaded; try again.
            </p>
          )}
          {pages.hasNextPage && (
            <Button onClick={() => void pages.fetchNextPage()} disabled={pages.isFetchingNextPage}>
              {pages.isFetchingNextPage ? 'Loading…' : last?.partial ? 'Keep searching' : 'Load older jobs'}
            </Button>
          )}
        </>
      )}
      {flow.element}
    </div>
  );
}
