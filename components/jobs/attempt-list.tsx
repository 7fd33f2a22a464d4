import type { AttemptDto } from '@/lib/api/types';
import { logUrl } from '@/lib/log-links';
import { dateTime, ms, shortDuration } from '@/lib/ui/format';
import { Badge, type Tone } from '../ui/badge';
import { UserText } from '../ui/user-text';
import { LongUserText } from '../ui/long-user-text';

const OUTCOME: Record<string, [Tone, string]> = {
  completed: ['emerald', 'completed'],
  failed: ['red', 'failed (dead letter)'],
  retried: ['orange', 'failed, retried'],
  lease_lost: ['red', 'lease lost'],
  cancelled: ['zinc', 'cancelled'],
  aborted: ['zinc', 'aborted (lease handed back or revoked)'],
  snoozed: ['sky', 'snoozed (put off by its handler; the attempt given back)'],
};

/**
 * How long an attempt ran. A lost lease did not run until it was recovered: its worker was
 * last heard from at its last renewal, and the rest is the wait for its lease to end — "took
 * 30 s" for a job that killed its worker at once would mislead. "Ended", not "ran out": a
 * supervisor ends the leases of a process that died at once, seconds into a 30 s lease.
 */
export function attemptTiming(a: Pick<AttemptDto, 'outcome' | 'startedAt' | 'finishedAt' | 'heartbeatAt'>, endMs: number): string {
  const start = ms(a.startedAt)!;
  const beat = a.heartbeatAt ? ms(a.heartbeatAt)! : null;
  if (a.outcome === 'lease_lost' && beat !== null) {
    const heard = beat > start ? `last heard from ${shortDuration(beat - start)} after its start` : 'never renewed its lease';
    return `${heard}; recovered ${shortDuration(endMs - beat)} later (its lease ended)`;
  }
  const took = a.finishedAt ? `took ${shortDuration(endMs - start)}` : `running for ${shortDuration(endMs - start)}`;
  return beat !== null ? `${took} · last heartbeat ${dateTime(a.heartbeatAt)}` : took;
}

/**
 * Each attempt: who ran it, when, how it ended, its error with the stack, and a link to its
 * logs when the console has a template for them (LEASEHOLD_LOG_URL; `job` fills its queue and type).
 */
export function AttemptList({
  attempts,
  nowMs,
  logs,
}: {
  attempts: AttemptDto[];
  nowMs: number;
  logs?: { template: string | null; job: { id: string; queue: string; type: string } };
}) {
  return (
    <ol className="space-y-3" data-testid="attempts-list">
      {[...attempts].reverse().map((a) => {
        const [tone, label] = a.outcome ? OUTCOME[a.outcome] ?? ['zinc', a.outcome] : ['amber', 'running'];
        const end = a.finishedAt ? ms(a.finishedAt)! : nowMs;
        const logsHref = logs
          ? logUrl(logs.template, { jobId: logs.job.id, attempt: a.attempt, workerId: a.workerId, queue: logs.job.queue, type: logs.job.type, startedAt: a.startedAt, finishedAt: a.finishedAt, nowMs })
          : null;
        return (
          <li key={a.attempt} className="rounded-md border border-zinc-200 p-3 dark:border-zinc-800" data-testid={`attempt-${a.attempt}`}>
            <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm">
              <span className="font-medium">Attempt {a.attempt}</span>
              <Badge tone={tone as Tone}>{label}</Badge>
              <span className="break-all font-mono text-xs">
                <UserText text={a.workerId} />
              </span>
              <span className="text-xs text-zinc-500" data-testid="attempt-timing">
                started {dateTime(a.startedAt)} · {attemptTiming(a, end)}
              </span>
              {logsHref && (
                <a href={logsHref} target="_blank" rel="noopener noreferrer" className="text-xs text-sky-700 hover:underline dark:text-sky-300" data-testid="attempt-logs">
                  logs ↗
                </a>
              )}
            </div>
            {a.error && (
              // A snooze's message says why the job was put off: no error.
              <p className={`mt-2 whitespace-pre-wrap wrap-anywhere text-sm ${a.outcome === 'snoozed' ? 'text-zinc-600 dark:text-zinc-300' : 'text-red-700 dark:text-red-300'}`}>
                <LongUserText text={a.error} multiline />
              </p>
            )}
            {a.errorStack && (
              <details className="mt-1">
                <summary className="cursor-pointer text-xs text-zinc-500">stack trace</summary>
                <pre className="mt-1 overflow-x-auto whitespace-pre-wrap break-all rounded bg-zinc-50 p-2 text-xs dark:bg-zinc-950">
                  <UserText text={a.errorStack} multiline />
                </pre>
              </details>
            )}
          </li>
        );
      })}
    </ol>
  );
}
