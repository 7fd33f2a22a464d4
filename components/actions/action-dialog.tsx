'use client';
import Link from 'next/link';
import { useState } from 'react';
import type { BulkAction, BulkItem, BulkReportDto } from '@/lib/api/types';
import { duration, int } from '@/lib/ui/format';
import { StatusBadge } from '../jobs/status-badge';
import { Badge } from '../ui/badge';
import { Button } from '../ui/button';
import { Dialog, DialogError, DialogFooter } from '../ui/dialog';
import { ReasonField } from './reason-field';
import { UserText } from '../ui/user-text';

export const ACTION_VERB: Record<BulkAction, string> = { requeue: 'Requeue', cancel: 'Cancel', delete: 'Delete', recover: 'Recover' };
const PAST: Record<string, string> = {
  requeued: 'requeued',
  revoked: 'lease revoked, requeued',
  cancelled: 'cancelled',
  cancel_requested: 'cancel requested',
  deleted: 'deleted',
  recovered: 'recovered',
  skipped: 'skipped',
  not_found: 'not found',
  would_change: 'will change',
  would_skip: 'will be skipped',
};
/** Above this many jobs the operator types the count to confirm. */
export const TYPED_CONFIRM_OVER = 1_000;
/** Deleting cannot be undone (a requeue or a cancel can be put right): typed above this many. */
export const TYPED_DELETE_OVER = 100;

export interface ActionOptionsState {
  resetAttempts: boolean;
  revokeLease: boolean;
}

export interface ActionDialogProps {
  action: BulkAction;
  /** What the action is aimed at, in words ("job #12", "3 selected jobs", "every job matching …"). */
  target: string;
  options: ActionOptionsState;
  /** Which options this action offers. */
  offers: { resetAttempts?: boolean; revokeLease?: boolean };
  onOptions(o: ActionOptionsState): void;
  /** The operator's reason, kept in the audit log. */
  reason: string;
  onReason(r: string): void;
  /** Why the signed-in role may not do this (the server refuses it too), or null. */
  forbidden: string | null;
  preview?: BulkReportDto;
  previewLoading: boolean;
  applying: boolean;
  report?: BulkReportDto;
  error?: string;
  onConfirm(): void;
  onClose(): void;
}

/** Preview → confirm → per-item report, for every operator action. */
export function ActionDialog(p: ActionDialogProps) {
  const verb = ACTION_VERB[p.action];
  const [typed, setTyped] = useState('');
  const willChange = p.preview?.changed ?? 0;
  // Recover over everything also re-rings due jobs whose wake-up signal is missing: that
  // alone is work worth confirming, though no lease changes.
  const willResignal = p.preview?.resignalTotal ?? p.preview?.resignal?.length ?? 0;
  // A recover preview that reached its listing limit counts only the first expired leases:
  // the run may move more (up to recoverLimit), so the count is "at least" and is typed.
  const atLeast = !!p.preview?.moreMayChange;
  const needsTyping = willChange > (p.action === 'delete' ? TYPED_DELETE_OVER : TYPED_CONFIRM_OVER) || atLeast;
  const canConfirm =
    !p.forbidden && !!p.preview && !p.previewLoading && !p.applying && (willChange > 0 || willResignal > 0) && (!needsTyping || typed.trim() === String(willChange));
  return (
    <Dialog title={p.report ? `${verb}: done` : `${verb}: what it will touch`} onClose={p.onClose} wide keepOnBackdrop>
      <div className="space-y-4 text-sm" data-testid="action-dialog">
        <p className="text-zinc-600 dark:text-zinc-300">
          {verb} <strong className="wrap-anywhere">
            <UserText text={p.target} />
          </strong>
        </p>
        {!p.report && (p.offers.resetAttempts || p.offers.revokeLease) && (
          <fieldset className="flex flex-wrap gap-4 rounded border border-zinc-200 p-2 dark:border-zinc-800">
            <legend className="px-1 text-xs text-zinc-500">Options</legend>
            {p.offers.resetAttempts && (
              <label className="flex items-center gap-1.5">
                <input type="checkbox" checked={p.options.resetAttempts} onChange={(e) => p.onOptions({ ...p.options, resetAttempts: e.target.checked })} />
                Reset attempts (a fresh attempt budget)
                <span className="text-xs text-zinc-500">— unticked, a job that used up its attempts gets one more</span>
              </label>
            )}
            {/* Only where it means something: the selection holds running jobs (or it is already ticked). */}
            {p.offers.revokeLease && (p.options.revokeLease || !p.preview || (p.preview.byStatus.running ?? 0) > 0) && (
              <label className="flex items-center gap-1.5">
                <input type="checkbox" checked={p.options.revokeLease} onChange={(e) => p.onOptions({ ...p.options, revokeLease: e.target.checked })} />
                Revoke live leases (take running jobs from their workers; the fence stops the old owner writing, but its handler runs
                on until its next heartbeat, so the two runs can overlap)
              </label>
            )}
          </fieldset>
        )}
        {!p.report && (
          <ReasonField value={p.reason} onChange={p.onReason} />
        )}
        {p.forbidden && !p.report && (
          <p role="note" className="rounded border border-amber-300 bg-amber-50 p-2 text-amber-900 dark:border-amber-900 dark:bg-amber-950 dark:text-amber-200">
            {p.forbidden}
          </p>
        )}
        <DialogError error={p.error} />
        {!p.report && p.previewLoading && <p className="text-zinc-500">Looking at what this would touch…</p>}
        {!p.report && p.preview && !p.previewLoading && <Summary report={p.preview} verb={verb} />}
        {p.report && <Summary report={p.report} verb={verb} />}
        {p.report && p.preview && <NoLongerMatching preview={p.preview} report={p.report} />}
        <DialogFooter>
          {!p.report && needsTyping && (
            <label className="mr-auto flex items-center gap-2 text-xs">
              Type {int(willChange)} to confirm
              <input
                className="w-28 rounded border border-zinc-300 bg-white px-2 py-1 dark:border-zinc-700 dark:bg-zinc-950"
                value={typed}
                onChange={(e) => setTyped(e.target.value.replace(/[^0-9]/g, ''))}
                aria-label="Type the number of jobs to confirm"
              />
            </label>
          )}
          <Button variant="ghost" onClick={p.onClose}>
            {p.report ? 'Close' : 'Back'}
          </Button>
          {!p.report && (
            <Button variant={p.action === 'delete' ? 'danger' : 'primary'} disabled={!canConfirm} onClick={p.onConfirm} data-testid="confirm-action">
              {p.applying ? `${verb}…` : confirmLabel(verb, willChange, willResignal, atLeast)}
            </Button>
          )}
        </DialogFooter>
      </div>
    </Dialog>
  );
}

/** The confirm button's words: what the action will do, the "at least" included. */
export function confirmLabel(verb: string, willChange: number, willResignal: number, atLeast: boolean): string {
  const jobs = (n: number) => `${int(n)} ${n === 1 && !atLeast ? 'job' : 'jobs'}`;
  const change = `${verb} ${atLeast ? 'at least ' : ''}${jobs(willChange)}`;
  if (willChange === 0 && willResignal > 0) return `${verb}: re-ring ${int(willResignal)} wake-up ${willResignal === 1 ? 'signal' : 'signals'}`;
  if (willResignal > 0) return `${change}, re-ring ${int(willResignal)}`;
  return change;
}

/**
 * A filter's action is resolved again when it runs (the preview showed a count): jobs that
 * left the filter meanwhile (cancelled, finished elsewhere) are neither changed nor skipped.
 * Said, so the numbers add up to what was confirmed.
 */
function NoLongerMatching({ preview, report }: { preview: BulkReportDto; report: BulkReportDto }) {
  const gone = preview.total - (report.changed + report.skipped);
  if (preview.moreMayChange || report.moreMayChange || gone <= 0) return null;
  return (
    <p role="note" className="text-xs text-zinc-600 dark:text-zinc-400" data-testid="no-longer-matching">
      {int(gone)} of the {int(preview.total)} jobs in the preview no longer matched the filter when it ran (changed meanwhile): left alone.
    </p>
  );
}

function Summary({ report: r, verb }: { report: BulkReportDto; verb: string }) {
  const done = !r.preview;
  const resignalled = r.resignalTotal ?? r.resignal?.length ?? 0;
  return (
    <div className="space-y-3" data-testid={done ? 'action-report' : 'action-preview'}>
      <p className="text-base" data-testid={done ? 'report-summary' : 'preview-summary'}>
        {done ? (
          <>
            <strong>{int(r.changed)}</strong> changed, <strong>{int(r.skipped)}</strong> skipped
          </>
        ) : (
          <>
            {r.moreMayChange && 'at least '}
            {int(r.total)} {r.total === 1 && !r.moreMayChange ? 'job' : 'jobs'}: <strong>{r.moreMayChange ? `at least ${int(r.changed)}` : int(r.changed)}</strong>{' '}
            will change, <strong>{int(r.skipped)}</strong> will be skipped
          </>
        )}
        {r.maxId && <span className="ml-2 text-xs text-zinc-500">(jobs created after #{r.maxId}, or finished after this preview, are not included)</span>}
      </p>
      {r.moreMayChange && (
        <p role="note" className="text-xs text-amber-800 dark:text-amber-300" data-testid="more-may-change">
          {done
            ? `Stopped at ${int(r.recoverLimit ?? r.changed)} expired leases, the most one run moves: more may remain. The recover sweep moves them, or run Recover again.`
            : `The preview lists the first ${int(r.changed)} expired leases; there may be more. One run recovers up to ${int(r.recoverLimit ?? r.changed)}; any beyond that wait for the next sweep.`}
        </p>
      )}
      {Object.keys(r.byStatus).length > 0 && (
        <p className="flex flex-wrap items-center gap-2 text-xs text-zinc-500">
          {done ? 'now' : 'currently'}:
          {Object.entries(r.byStatus).map(([s, n]) => (
            <span key={s} className="inline-flex items-center gap-1">
              <StatusBadge status={s as never} /> {int(n ?? 0)}
            </span>
          ))}
        </p>
      )}
      {r.reasons.length > 0 && (
        <div>
          <p className="text-xs font-medium uppercase tracking-wide text-zinc-500">{done ? 'Skipped, and why' : 'Will be skipped, and why'}</p>
          <ul className="mt-1 list-disc pl-5">
            {r.reasons.map((x) => (
              <li key={x.reason} className="wrap-anywhere">
                <UserText text={x.reason} /> {x.count > 1 && <span className="text-zinc-500">(×{int(x.count)})</span>}
              </li>
            ))}
          </ul>
        </div>
      )}
      {r.items.length > 0 ? (
        <ItemTable items={r.items} destructive={r.action === 'delete'} />
      ) : (
        r.total === 0 &&
        (resignalled > 0 ? (
          <p className="text-zinc-500">No expired leases.</p>
        ) : (
          <p className="text-zinc-500">Nothing to {verb.toLowerCase()}: no job matches.</p>
        ))
      )}
      {r.itemsTruncated && <p className="text-xs text-zinc-500">Listing the first {int(r.items.length)}; the counts above cover every job.</p>}
      {r.resignal && r.resignal.length > 0 && (
        <div>
          <p className="text-xs font-medium uppercase tracking-wide text-zinc-500">
            {int(resignalled)} due {resignalled === 1 ? 'job' : 'jobs'} with no wake-up signal in Redis ({done ? 're-rung' : 'would be re-rung'}
            {resignalled > r.resignal.length ? `; the first ${int(r.resignal.length)} listed` : ''})
          </p>
          <ul className="mt-1 max-h-40 overflow-y-auto font-mono text-xs" data-testid="resignal-list">
            {r.resignal.map((x) => (
              <li key={x.id}>
                #{x.id} <UserText text={x.queue} /> <UserText text={x.type} /> — waiting {duration(x.waitedMs)}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

/** `destructive`: the change cannot be undone (a delete), so it reads in red, not green. */
function ItemTable({ items, destructive = false }: { items: BulkItem[]; destructive?: boolean }) {
  return (
    <div className="max-h-80 overflow-y-auto rounded border border-zinc-200 dark:border-zinc-800">
      <table className="w-full text-xs" data-testid="action-items">
        <thead className="sticky top-0 bg-zinc-50 text-left text-zinc-500 dark:bg-zinc-900">
          <tr>
            <th className="px-2 py-1">Job</th>
            <th className="px-2 py-1">Status</th>
            <th className="px-2 py-1">Queue · type</th>
            <th className="px-2 py-1">Owner</th>
            <th className="px-2 py-1">Outcome</th>
          </tr>
        </thead>
        <tbody>
          {items.map((i) => (
            <tr key={i.id} className="border-t border-zinc-100 dark:border-zinc-800" data-testid={`action-item-${i.id}`}>
              <td className="px-2 py-1 font-mono">
                <Link prefetch={false} href={`/jobs/${i.id}`} className="text-sky-700 hover:underline dark:text-sky-400">
                  #{i.id}
                </Link>
              </td>
              <td className="px-2 py-1">{i.status && <StatusBadge status={i.status} />}</td>
              <td className="min-w-[9rem] break-all px-2 py-1">
                <UserText text={i.queue} /> ·{' '}
                <span className="font-mono">
                  <UserText text={i.type} />
                </span>
              </td>
              <td className="min-w-[9rem] break-all px-2 py-1 font-mono">
                <UserText text={i.workerId} />
              </td>
              <td className="px-2 py-1">
                <Badge tone={!i.ok ? 'zinc' : destructive ? 'red' : 'emerald'}>{PAST[i.outcome] ?? i.outcome}</Badge>{' '}
                {i.reason && (
                  <span className="wrap-anywhere" data-testid="item-reason">
                    <UserText text={i.reason} />
                  </span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
