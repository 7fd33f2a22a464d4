import Link from 'next/link';
import type { AuditEntryDto } from '@/lib/api/audit';
import { targetConditions, targetText } from '@/lib/ui/audit-target';
import { dateTime, int } from '@/lib/ui/format';
import { visible } from '@/lib/ui/visible';
import { UserText } from '../ui/user-text';
import { ScrollFrame } from '../ui/scroll-frame';

/**
 * What an entry applied to: a bulk action's filter as its conditions, one chip each (user
 * text escaped), with the stored JSON under a disclosure; anything else in a few words.
 */
function AuditTarget({ target }: { target: Record<string, unknown> }) {
  const conds = targetConditions(target);
  if (!conds) return <UserText text={targetText(target)} />;
  return (
    <>
      <span className="flex flex-wrap items-center gap-1" data-testid="audit-filter" title={targetText(target)}>
        <span className="text-zinc-500">jobs where</span>
        {conds.length === 0 && <span className="text-zinc-500">(no condition: every job)</span>}
        {conds.map((c, k) => (
          <span key={k} className="rounded bg-zinc-100 px-1.5 py-0.5 dark:bg-zinc-800" data-testid="audit-filter-chip">
            <span className="text-zinc-500">
              {c.label}
              {c.op ? ` ${c.op}` : ''}
            </span>{' '}
            <span className="font-medium">
              <UserText text={c.value} />
            </span>
          </span>
        ))}
      </span>
      <details className="mt-0.5">
        <summary className="cursor-pointer text-zinc-500">raw JSON</summary>
        <pre className="whitespace-pre-wrap wrap-anywhere font-mono text-[11px]" data-testid="audit-filter-json">
          <UserText text={JSON.stringify(target, null, 2)} multiline />
        </pre>
      </details>
    </>
  );
}

export function AuditTable({ entries, onActor, onAction }: { entries: AuditEntryDto[]; onActor?(a: string): void; onAction?(a: string): void }) {
  return (
    <ScrollFrame className="rounded border border-zinc-200 dark:border-zinc-800">
      <table className="w-full text-sm" data-testid="audit-table">
        <thead className="bg-zinc-50 text-left text-xs text-zinc-500 dark:bg-zinc-900">
          <tr>
            <th className="px-2 py-1">When</th>
            <th className="px-2 py-1">Who</th>
            <th className="px-2 py-1">Action</th>
            <th className="px-2 py-1">Applied to</th>
            <th className="px-2 py-1 text-right">Changed</th>
            <th className="px-2 py-1 text-right">Skipped</th>
            <th className="px-2 py-1">Reason</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.id} className="border-t border-zinc-100 align-top dark:border-zinc-800" data-testid={`audit-${e.id}`}>
              <td className="tabular whitespace-nowrap px-2 py-1 text-xs text-zinc-500">{dateTime(e.at)}</td>
              <td className="min-w-[8rem] break-all px-2 py-1">
                <button type="button" className="hover:underline" onClick={() => onActor?.(e.actor)}>
                  <UserText text={e.actor} />
                </button>{' '}
                <span className="whitespace-nowrap text-xs text-zinc-500">({e.actorKind})</span>
              </td>
              <td className="px-2 py-1 font-mono text-xs">
                <button type="button" className="hover:underline" onClick={() => onAction?.(e.action)}>
                  {e.action}
                </button>
                <AuditOptions entry={e} />
              </td>
              <td className="min-w-[12rem] break-all px-2 py-1 text-xs">
                {/* Jobs given by id are named by their links below ("job #122" beside "#122" said it twice). */}
                {Array.isArray(e.target.ids) && e.jobIds.length > 0 ? (
                  <span data-testid="audit-ids">{e.target.ids.length === 1 ? 'job' : `${e.target.ids.length} jobs`}</span>
                ) : (
                  <AuditTarget target={e.target} />
                )}
                {e.jobIds.length > 0 && (
                  <span className="block text-zinc-500">
                    {e.jobIds.slice(0, LINKED).map((id) => (
                      <Link key={id} prefetch={false} href={`/jobs/${id}`} className="mr-1 text-sky-700 hover:underline dark:text-sky-400">
                        #{id}
                      </Link>
                    ))}
                    <JobCount entry={e} />
                  </span>
                )}
              </td>
              {e.state === 'done' ? (
                <>
                  <td className="tabular px-2 py-1 text-right">{int(e.changed)}</td>
                  <td className="tabular px-2 py-1 text-right">{int(e.skipped)}</td>
                </>
              ) : (
                <td colSpan={2} className="px-2 py-1 text-right text-xs" data-testid="audit-state">
                  {e.state === 'failed' ? (
                    <span className="text-red-700 dark:text-red-400">
                      failed: <UserText text={String(e.details.error ?? 'error')} />
                    </span>
                  ) : (
                    <span className="text-amber-700 dark:text-amber-400" title="The entry was written before the action; its outcome never was (the process died or the database went away).">
                      outcome unknown
                    </span>
                  )}
                </td>
              )}
              <td className="min-w-[10rem] wrap-anywhere px-2 py-1 text-xs">{e.reason ? <UserText text={e.reason} multiline /> : <span className="text-zinc-400">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollFrame>
  );
}

function AuditOptions({ entry }: { entry: Pick<AuditEntryDto, 'details' | 'action'> }) {
  const text = auditOptions(entry);
  return text ? (
    <span className="block font-sans text-zinc-500" data-testid="audit-options">
      {text}
    </span>
  ) : null;
}

/** How a schedule's changed field is named in "was: …". */
const WAS_LABEL: Record<string, string> = { cron: 'cron', timezone: 'zone', queue: 'queue', type: 'type', priority: 'priority', maxAttempts: 'attempts', overlap: 'overlap' };

function JobCount({ entry }: { entry: { jobIds: readonly string[]; details: Record<string, unknown> } }) {
  const text = jobCountText(entry, LINKED);
  return text && <span data-testid="audit-job-count">{text}</span>;
}

/** How many of an entry's jobs are linked on its row. */
const LINKED = 10;

/**
 * After the linked ids, how many jobs the entry touched in all: every one (GET /api/audit's
 * jobCount), and how many of them find it on their own page when the entry keeps fewer ids
 * (jobIdsKept: a bulk action over more than AUDIT_MAX_JOB_IDS). Null when the links are all.
 */
export function jobCountText(e: { jobIds: readonly string[]; details: Record<string, unknown> }, linked: number): string | null {
  const count = Number(e.details.jobCount ?? e.jobIds.length);
  if (!(count > linked)) return null;
  const kept = e.details.jobIdsKept;
  return `… (${int(count)} jobs${typeof kept === 'number' ? `; the first ${int(kept)} show it on their pages` : ''})`;
}

/**
 * The options an action ran with and what it set, in words ("reset attempts · rang 3
 * wake-ups", "cron 0 3 * * * (Europe/Berlin) · demo.noop on default", "concurrency limit 2"):
 * what changed, on the entry's row, rather than only under "raw JSON".
 */
export function auditOptions(e: Pick<AuditEntryDto, 'details'> & Partial<Pick<AuditEntryDto, 'action'>>): string | null {
  const d = e.details;
  const parts: string[] = [];
  if (d.resetAttempts === true) parts.push('reset attempts');
  if (d.revokeLease === true) parts.push('revoked live leases');
  if (typeof d.resignalled === 'number' && d.resignalled > 0) parts.push(`rang ${d.resignalled} missing wake-up${d.resignalled === 1 ? '' : 's'}`);
  // A schedule's definition (schedule.add: a new one or a redefinition). Its names are user
  // text: shown with their invisible and direction characters as escapes, as UserText does.
  if (e.action === 'schedule.add') {
    if (d.created === true) parts.push('new');
    if (d.created === false) parts.push('redefined');
    if (typeof d.cron === 'string') parts.push(`cron ${visible(d.cron)}${typeof d.timezone === 'string' ? ` (${visible(d.timezone)})` : ''}`);
    if (typeof d.type === 'string') parts.push(`${visible(d.type)}${typeof d.queue === 'string' ? ` on ${visible(d.queue)}` : ''}`);
    if (d.overlap === 'skip') parts.push('one run at a time');
    if (d.payloadChanged === true) parts.push('payload changed');
    // A redefinition's old values, for the fields it changed.
    if (d.changedFrom && typeof d.changedFrom === 'object') {
      const was = Object.entries(d.changedFrom as Record<string, unknown>).map(([k, v]) => `${WAS_LABEL[k] ?? visible(k)} ${v === null ? 'the type’s' : visible(String(v))}`);
      if (was.length) parts.push(`was: ${was.join(', ')}`);
    }
  }
  // A queue's limits (0 clears one).
  if (typeof d.concurrencyLimit === 'number') parts.push(d.concurrencyLimit === 0 ? 'concurrency limit cleared' : `concurrency limit ${d.concurrencyLimit}`);
  if (typeof d.rateLimit === 'number') parts.push(d.rateLimit === 0 ? 'rate limit cleared' : `rate limit ${d.rateLimit} per ${typeof d.ratePeriodMs === 'number' ? `${d.ratePeriodMs} ms` : 'period'}`);
  // A reschedule's new due time and priority.
  if (e.action === 'reschedule' || e.action === 'bulk.reschedule') {
    if (typeof d.runAt === 'string') parts.push(`due ${d.runAt.replace('T', ' ').replace(/(:\d{2})\.\d{3}Z$/, '$1 UTC')}`);
    if (typeof d.priority === 'number') parts.push(`priority ${d.priority}`);
  }
  return parts.length ? parts.join(' · ') : null;
}
