'use client';
import { createColumnHelper, flexRender, getCoreRowModel, useReactTable } from '@tanstack/react-table';
import Link from 'next/link';
import { type ReactNode, useMemo } from 'react';
import { DEFAULT_PRIORITY } from '@/lib/api/priority';
import type { JobRow } from '@/lib/api/types';
import { ago, dateTime, ms } from '@/lib/ui/format';
import { SWEEPING, type Sweep } from '@/lib/ui/sweep';
import { visible } from '@/lib/ui/visible';
import { marksSuspect, SUSPECT_ALONE, SUSPECT_MEANING } from '@/lib/ui/suspect';
import { UserText } from '../ui/user-text';
import { Attempts, type Cadence, HeartbeatAge, LeaseCountdown } from './lease';
import { PriorityBadge } from './priority-badge';
import { WorkerLink } from './worker-link';
import { StatusBadge } from './status-badge';
import { ScrollFrame } from '../ui/scroll-frame';

export type TableJob = JobRow & {
  /** The job no longer matches the view's filter (it changed since the page was loaded). */
  gone?: boolean;
  /** When the row was read (database clock): see LeaseFields.readAt. */
  readAt?: string | null;
};

const col = createColumnHelper<TableJob>();

export interface JobTableProps {
  rows: TableJob[];
  nowMs: number;
  selected: ReadonlySet<string>;
  onToggle(id: string, range: boolean): void;
  onToggleAll(select: boolean): void;
  /** Who moves an expired lease on (see LeaseCountdown); the live workers' sweep when unknown. */
  sweep?: Sweep;
  /** The lease and renewal interval the console is configured with (see heartbeatLate); null when unknown. */
  cadence?: Cadence | null;
  /** Lost leases in a row from which a job is a suspect, a likely poison (lib/queue/job.ts SUSPECT_STREAK); null: not flagged. */
  suspectStreak?: number | null;
}

/** Past it, a due time is said as a date: "due in 1120 d 21 h" is read as a number to work out. */
const DATE_BEYOND_MS = 7 * 86_400_000;

/**
 * The When column: finished, started, due (in a while, or how long ago for a job that waits
 * past its due time: a retry, a rescheduled job), or created (a job due as it was made).
 */
export function whenText(j: Pick<TableJob, 'status' | 'finishedAt' | 'startedAt' | 'runAt' | 'createdAt'>, nowMs: number): { text: string; at: string | null } {
  if (j.finishedAt) return { text: `finished ${ago(nowMs - ms(j.finishedAt)!)}`, at: j.finishedAt };
  if (j.status === 'running') return { text: `started ${ago(nowMs - ms(j.startedAt)!)}`, at: j.startedAt };
  const due = ms(j.runAt)!;
  if (due > nowMs) return { text: due - nowMs > DATE_BEYOND_MS ? `due ${dateTime(j.runAt)}` : `due in ${ago(due - nowMs).replace(' ago', '')}`, at: j.runAt };
  if (j.status === 'retrying' || due > ms(j.createdAt)! + 1_000) return { text: `due ${ago(nowMs - due)}`, at: j.runAt };
  return { text: `created ${ago(nowMs - ms(j.createdAt)!)}`, at: j.createdAt };
}

/** The jobs list: one row per job, selectable (shift-click selects a range). */
export function JobTable({ rows, nowMs, selected, onToggle, onToggleAll, sweep = SWEEPING, cadence = null, suspectStreak = null }: JobTableProps) {
  const columns = useMemo(
    () => [
      col.display({
        id: 'select',
        header: () => (
          <input
            type="checkbox"
            aria-label="Select all rows on the page"
            // All: every row that still matches the view (a greyed one is not taken in by it).
            checked={rows.some((r) => !r.gone) && rows.every((r) => r.gone || selected.has(r.id))}
            onChange={(e) => onToggleAll(e.target.checked)}
          />
        ),
        cell: ({ row }) => (
          <input
            type="checkbox"
            aria-label={`Select job ${row.original.id}`}
            checked={selected.has(row.original.id)}
            // A checkbox's change comes from its click (the mouse's or the keyboard's), which
            // says whether shift was held. Not onClick + preventDefault: Chromium puts a
            // cancelled click's box back after React has drawn the new selection, so the box
            // showed unticked until the next render (a click "did not change its state" in CI).
            onChange={(e) => onToggle(row.original.id, (e.nativeEvent as MouseEvent).shiftKey === true)}
          />
        ),
      }),
      col.accessor('id', {
        header: 'Job',
        cell: (c) => (
          <Link prefetch={false} href={`/jobs/${c.getValue()}`} className="font-mono text-sky-700 hover:underline dark:text-sky-400">
            #{c.getValue()}
          </Link>
        ),
      }),
      col.accessor('status', {
        header: 'Status',
        cell: (c) => (
          <span className="inline-flex flex-col gap-0.5">
            <StatusBadge status={c.getValue()} cancelRequested={!!c.row.original.cancelRequestedAt} />
            {suspectStreak !== null && marksSuspect(c.getValue(), c.row.original.leaseLostStreak, suspectStreak) && (
              <span
                className="text-[11px] font-medium text-red-700 dark:text-red-300"
                data-testid="suspect"
                title={`${SUSPECT_MEANING}. ${SUSPECT_ALONE}`}
              >
                suspect: {c.row.original.leaseLostStreak} leases lost in a row
              </span>
            )}
            {c.row.original.gone && <span className="text-[11px] text-zinc-500">no longer matches this view</span>}
          </span>
        ),
      }),
      col.accessor('queue', {
        header: 'Queue',
        cell: (c) => (
          <span className="block max-w-[12rem] truncate whitespace-nowrap" title={visible(c.getValue())}>
            <UserText text={c.getValue()} />
          </span>
        ),
      }),
      col.accessor('type', {
        header: 'Type',
        cell: (c) => (
          <span className="flex items-center gap-1.5">
            <span className="block max-w-[14rem] truncate whitespace-nowrap font-mono text-xs" title={visible(c.getValue())}>
              <UserText text={c.getValue()} />
            </span>
            {/* Only a priority other than the default, which most carry: nothing worth reading there. */}
            {c.row.original.priority !== DEFAULT_PRIORITY && <PriorityBadge priority={c.row.original.priority} />}
          </span>
        ),
      }),
      col.display({ id: 'attempts', header: 'Attempts', cell: (c) => <Attempts job={c.row.original} /> }),
      col.display({
        id: 'owner',
        header: 'Owner · lease',
        cell: ({ row: { original: j } }) =>
          j.status === 'running' ? (
            <span className="flex min-w-[10rem] flex-col gap-0.5 text-xs">
              <span className="break-all font-mono" data-testid="owner">
                <WorkerLink workerId={j.workerId} />
              </span>
              <span className="flex flex-wrap gap-2">
                <LeaseCountdown job={j} nowMs={nowMs} sweep={sweep} />
                <HeartbeatAge job={j} nowMs={nowMs} cadence={cadence} />
              </span>
              <LastCheckpoint job={j} nowMs={nowMs} />
            </span>
          ) : j.workerId ? (
            <span className="block min-w-[10rem] break-all font-mono text-xs text-zinc-400">
              <UserText text={j.workerId} />
            </span>
          ) : null,
      }),
      col.display({
        id: 'when',
        header: 'When',
        cell: ({ row: { original: j } }) => {
          const { text, at } = whenText(j, nowMs);
          return (
            <span className="whitespace-nowrap text-xs text-zinc-500 dark:text-zinc-400" title={at ?? ''}>
              {text}
            </span>
          );
        },
      }),
      col.accessor('error', {
        header: 'Last error',
        // A running or queued job's error is an earlier attempt's, not a present failure:
        // said so, in grey (in red, healthy running rows read as failing).
        cell: (c) => {
          const earlier = c.getValue() && (c.row.original.status === 'running' || c.row.original.status === 'queued');
          return (
            <span
              className={`line-clamp-2 min-w-[12rem] max-w-md wrap-anywhere text-xs ${earlier ? 'text-zinc-500 dark:text-zinc-400' : 'text-red-700 dark:text-red-300'}`}
              data-earlier-attempt={earlier ? '' : undefined}
            >
              {earlier && 'earlier attempt: '}
              <UserText text={c.getValue()} multiline />
            </span>
          );
        },
      }),
    ],
    [rows, nowMs, selected, onToggle, onToggleAll, sweep, cadence, suspectStreak],
  );
  const table = useReactTable({ data: rows, columns, getCoreRowModel: getCoreRowModel(), getRowId: (r) => r.id });
  return (
    <ScrollFrame className="rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
      <table className="w-full text-sm" data-testid="job-table">
        <thead className="border-b border-zinc-200 text-left text-xs uppercase tracking-wide text-zinc-500 dark:border-zinc-800">
          {table.getHeaderGroups().map((hg) => (
            <tr key={hg.id}>
              {hg.headers.map((h) => (
                <th key={h.id} className="px-3 py-2 font-medium">
                  {renderPart(h.column.columnDef.header, h.getContext())}
                </th>
              ))}
            </tr>
          ))}
        </thead>
        <tbody>
          {table.getRowModel().rows.map((r) => (
            <tr
              key={r.id}
              data-testid={`job-row-${r.id}`}
              className={`border-b border-zinc-100 last:border-0 dark:border-zinc-800/60 ${selected.has(r.id) ? 'bg-sky-50 dark:bg-sky-950/40' : ''} ${r.original.gone ? 'opacity-50' : ''}`}
            >
              {r.getVisibleCells().map((c) => (
                <td key={c.id} className="px-3 py-2 align-top">
                  {renderPart(c.column.columnDef.cell, c.getContext())}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollFrame>
  );
}

/**
 * A header's or cell's renderer called as a function, not mounted as a component (what
 * flexRender does with a function): the columns are made anew whenever the rows, the
 * selection or the clock change — each second — and a component of a new identity remounts,
 * so every checkbox was replaced each second: a click whose press and release straddled the
 * tick was lost (an e2e test failed on it), and a focused checkbox lost its focus. The
 * renderers use no hooks.
 */
function renderPart<C extends object>(part: unknown, ctx: C): ReactNode {
  return typeof part === 'function' ? (part as (c: C) => ReactNode)(ctx) : flexRender(part as never, ctx);
}

/** A running job's progress: the checkpoint its handler saved last (ctx.checkpoint), and when. */
function LastCheckpoint({ job, nowMs }: { job: TableJob; nowMs: number }) {
  const entries = Object.entries(job.checkpoints ?? {});
  if (!entries.length) return null;
  const [name, last] = entries.reduce((a, b) => (ms(b[1].at)! > ms(a[1].at)! ? b : a));
  return (
    <span className="text-zinc-500" data-testid="last-checkpoint" title={`${entries.length} checkpoint${entries.length === 1 ? '' : 's'} saved; the next attempt resumes from them`}>
      checkpoint <UserText text={name} /> {ago(nowMs - ms(last.at)!)}
      {last.attempt !== job.attemptCount && ` (attempt ${last.attempt})`}
    </span>
  );
}
