import type { AuditEntryDto } from '@/lib/api/audit';
import type { AttemptDto, JobDetailDto } from '@/lib/api/types';
import { dateTime, ms } from '@/lib/ui/format';
import { UserText } from '../ui/user-text';

interface Event {
  at: string;
  what: string;
  detail?: string;
  /** Still to come (by the database's clock): drawn apart from what happened. */
  future?: boolean;
}

const ENDED: Record<string, string> = {
  completed: 'completed',
  failed: 'failed → dead letter',
  retried: 'failed, will retry',
  lease_lost: 'lease lost (the worker stopped renewing)',
  cancelled: 'stopped after a cancel',
  aborted: 'lease handed back or revoked',
  snoozed: 'snoozed by its handler (the attempt given back)',
};

/** An operator's action on job `jobId`, from the audit log (text only). */
function auditEvent(e: AuditEntryDto, jobId: string): Event {
  const result = e.state === 'started' ? ' — outcome unknown' : e.state === 'failed' ? ' — failed' : e.changed > 0 ? '' : ' — skipped';
  const detail = e.reason ? `reason: ${e.reason}` : undefined;
  if (e.action === 'copy') {
    // One entry on both jobs: the original first, then the copy it made.
    const [from, to] = e.jobIds;
    const what = jobId === from ? `copied by ${e.actor}${to ? ` → job #${to}` : ''}${result}` : `enqueued by ${e.actor} as a copy of job #${from}`;
    return { at: e.at, what, detail };
  }
  if (e.action === 'reschedule') {
    const { runAt, priority } = e.details as { runAt?: string | null; priority?: number | null };
    const moves = [runAt && `due ${dateTime(runAt)}`, typeof priority === 'number' && `priority ${priority}`].filter(Boolean).join(', ');
    return { at: e.at, what: `rescheduled by ${e.actor}${moves ? ` (${moves})` : ''}${result}`, detail };
  }
  const scope = e.jobIds.length > 1 || e.target.filter ? ' (bulk)' : '';
  return { at: e.at, what: `${e.action}${scope} by ${e.actor}${result}`, detail };
}

/**
 * Why a failed attempt went to the dead letter, where the job still shows it: the attempts
 * used up, or a permanent error (PermanentError, no handler) with attempts left. Said only
 * of the attempt that ended the job: after a requeue raised its attempts, an earlier
 * failure's cause can no longer be read from them.
 */
function whyDead(a: AttemptDto, d: JobDetailDto): string {
  if (d.job.status !== 'failed' || a.finishedAt !== d.job.finishedAt) return '';
  return a.attempt >= d.job.maxAttempts ? ' (no attempts left)' : ` (a permanent error: not retried, ${d.job.maxAttempts - a.attempt} attempt${d.job.maxAttempts - a.attempt === 1 ? '' : 's'} left)`;
}

export function timelineEvents(d: JobDetailDto, audit: AuditEntryDto[] = []): Event[] {
  const j = d.job;
  const ev: Event[] = [{ at: j.createdAt, what: 'enqueued', detail: `queue ${j.queue}, up to ${j.attemptBudget} attempts` }]; // as enqueued: a requeue raises maxAttempts later
  // Still to come by the database's clock (the browser's may be off).
  if (ms(j.runAt)! > ms(j.createdAt)! + 1000 && j.status !== 'running') {
    const future = ms(j.runAt)! > ms(d.dbNow)!;
    ev.push({ at: j.runAt, what: future ? 'will be due (scheduled, not yet)' : 'due', future });
  }
  d.attempts.forEach((a: AttemptDto) => {
    ev.push({ at: a.startedAt!, what: `attempt ${a.attempt} claimed`, detail: a.workerId });
    if (!a.finishedAt) return;
    // A lost lease (or a cancel) that ended the job: say where it went, as a failure does.
    const ended = a.finishedAt === j.finishedAt && a.outcome !== 'failed' && a.outcome !== 'completed' && a.outcome !== 'cancelled';
    const then = ended && j.status === 'failed' ? ' → dead letter (no attempts left)' : ended && j.status === 'cancelled' ? ' → cancelled' : '';
    ev.push({ at: a.finishedAt, what: `attempt ${a.attempt} ${ENDED[a.outcome ?? ''] ?? a.outcome}${then || (a.outcome === 'failed' ? whyDead(a, d) : '')}` });
  });
  if (j.cancelRequestedAt) ev.push({ at: j.cancelRequestedAt, what: 'cancel requested by an operator' });
  if (j.finishedAt && !d.attempts.some((a) => a.finishedAt === j.finishedAt)) ev.push({ at: j.finishedAt, what: `finished: ${j.status}` });
  for (const a of audit) ev.push(auditEvent(a, j.id));
  return ev.sort((a, b) => ms(a.at)! - ms(b.at)!);
}

export function Timeline({ detail, audit }: { detail: JobDetailDto; audit?: AuditEntryDto[] }) {
  return (
    <ol className="relative space-y-2 border-l border-zinc-200 pl-4 text-sm dark:border-zinc-800" data-testid="timeline">
      {timelineEvents(detail, audit).map((e, k) => (
        <li key={k} className={e.future ? 'italic text-zinc-500' : undefined} data-future={e.future ? '' : undefined}>
          <span
            className={`absolute -left-1 mt-1.5 h-2 w-2 rounded-full ${e.future ? 'border border-zinc-400 bg-white dark:bg-zinc-900' : 'bg-zinc-400'}`}
            aria-hidden="true"
          />
          <span className="tabular text-xs text-zinc-500">{dateTime(e.at)}</span> <span>
            <UserText text={e.what} />
          </span>
          {e.detail && (
            <span className="break-all text-xs text-zinc-500">
              {' · '}
              <UserText text={e.detail} />
            </span>
          )}
        </li>
      ))}
    </ol>
  );
}
