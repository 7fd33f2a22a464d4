import Link from 'next/link';
import { queueSignal } from '@/lib/ui/signal';
import type { QueueStatsDto } from '@/lib/api/types';
import { duration, int } from '@/lib/ui/format';
import { visible } from '@/lib/ui/visible';
import { SUSPECT_MEANING } from '@/lib/ui/suspect';
import { ActionButton } from '../actions/action-button';
import { UserText } from '../ui/user-text';
import { ScrollFrame } from '../ui/scroll-frame';

const KIND_TITLES = {
  exact: 'exact',
  estimate: 'estimate from table statistics',
  atLeast: 'at least: counted up to a cap',
  unknown: 'unknown: the table statistics do not name this queue (it filled since the last ANALYZE, or holds few of these)',
} as const;

const n = (q: QueueStatsDto, s: keyof QueueStatsDto['counts']) => (
  <span className="tabular" title={KIND_TITLES[q.kinds[s]]} data-kind={q.kinds[s]}>
    {q.kinds[s] === 'unknown' ? (
      '?'
    ) : (
      <>
        {q.kinds[s] === 'atLeast' ? '≥' : q.kinds[s] === 'estimate' && q.counts[s] > 0 ? '≈' : ''}
        {int(q.counts[s])}
      </>
    )}
  </span>
);

/**
 * The Pause/Resume column stays at the right edge while the others scroll under it: on a
 * phone the table is twice the screen's width, and the button lay a scroll away.
 */
const STUCK = 'sticky right-0 bg-white py-1.5 pl-2 pr-1 max-md:shadow-[-6px_0_6px_-6px_rgb(0_0_0/0.15)] dark:bg-zinc-900';

const BUTTON = 'rounded border border-zinc-300 px-1.5 py-0.5 hover:bg-zinc-100 disabled:opacity-50 aria-disabled:cursor-wait aria-disabled:opacity-50 dark:border-zinc-700 dark:hover:bg-zinc-800';

/** What a queue's controls allow, in a few words. */
function controlsText(c: NonNullable<QueueStatsDto['controls']>) {
  const parts: string[] = [];
  if (c.concurrencyLimit !== null) parts.push(`${c.running}/${c.concurrencyLimit} running`);
  if (c.rateLimit !== null) parts.push(`${c.rateLimit} per ${duration(c.ratePeriodMs ?? 0)} (${c.rateTokens ?? 0} left)`);
  return parts.join(' · ');
}

/**
 * Per queue: what waits, how long, whether Redis holds a wake-up for it, whether a live
 * worker consumes it, its pause and global limits (use against the limit), and the counts
 * per status.
 */
export function QueueTable({
  queues,
  usingRedis,
  onPause,
  onResume,
  busyQueue,
  pauseWhy,
  resumeWhy,
}: {
  queues: QueueStatsDto[];
  usingRedis: boolean;
  /** Pause… asks first (the page's dialog: a pause stops every worker on every host claiming from it); Resume is one click. */
  onPause?: (queue: string) => void;
  onResume?: (queue: string) => void;
  busyQueue?: string;
  /** Why the signed-in role may not pause or resume (the button stays, disabled, saying so). */
  pauseWhy?: string | null;
  resumeWhy?: string | null;
}) {
  return (
    <ScrollFrame>
      <table className="w-full text-sm" data-testid="queue-table">
        <thead className="text-left text-xs uppercase tracking-wide text-zinc-500">
          <tr>
            <th className="py-1 pr-3">Queue</th>
            <th className="py-1 pr-3" title="queued or retrying, due now (PostgreSQL)">Due now</th>
            <th className="py-1 pr-3">Oldest due</th>
            <th className="py-1 pr-3" title="job ids waiting in the queue's Redis list">Ids in Redis</th>
            <th className="py-1 pr-3">Signal</th>
            <th className="py-1 pr-3" title="worker processes alive (a heartbeat within a lease) that consume the queue">Workers</th>
            <th className="py-1 pr-3">Queued</th>
            <th className="py-1 pr-3">Running</th>
            <th className="py-1 pr-3">Retrying</th>
            <th className="py-1 pr-3">Failed</th>
            <th className="py-1 pr-3">Completed</th>
            <th className="py-1 pr-3" title="pause and global limits, honoured by every worker at claim time">Controls</th>
            {onPause && onResume && (
              <th className={STUCK}>
                <span className="sr-only">Pause or resume</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {queues.map((q) => {
            const signal = queueSignal(q);
            return (
              <tr key={q.queue} className="border-t border-zinc-100 dark:border-zinc-800" data-testid={`queue-${q.queue}`}>
                <td className="min-w-[8rem] break-all py-1.5 pr-3">
                  <Link href={`/jobs?queue=${encodeURIComponent(q.queue)}`} className="hover:underline">
                    <UserText text={q.queue} />
                  </Link>
                </td>
                <td className="tabular py-1.5 pr-3" data-testid="due">
                  {q.dueCapped ? '≥' : ''}
                  {int(q.due)}
                </td>
                <td className={`tabular py-1.5 pr-3 ${q.oldestDueAgeMs !== null && q.oldestDueAgeMs > 60_000 ? 'text-red-700 dark:text-red-300' : ''}`}>
                  {q.oldestDueAgeMs === null ? '—' : duration(q.oldestDueAgeMs)}
                </td>
                <td className="tabular py-1.5 pr-3" data-testid="backlog">
                  {q.signalBacklog === null ? '—' : int(q.signalBacklog)}
                </td>
                <td className="py-1.5 pr-3 text-xs">
                  {!usingRedis ? (
                    <span className="text-zinc-500">polling (no Redis)</span>
                  ) : signal.kind !== 'served' ? (
                    signal.due === 0 ? (
                      <span className="text-emerald-700 dark:text-emerald-300">ok</span>
                    ) : (
                    <span
                      className="text-zinc-500"
                      title={
                        signal.kind === 'limited'
                          ? 'a limited queue is claimed by polling under its lock (every 250 ms), never from its Redis list: its due jobs wait for its limit, no wake-up is missing'
                          : 'its due jobs wait by design, until the queue is resumed or a worker for it starts: no wake-up is missing'
                      }
                    >
                      {signal.kind === 'paused' ? 'paused' : signal.kind === 'limited' ? 'limited (polled)' : 'no worker'}
                    </span>
                    )
                  ) : (signal.missing === 0 || signal.missing === null) && signal.suspect > 0 && signal.unhandled === 0 ? (
                    <span
                      className="text-zinc-500"
                      title={`suspects wait for a worker that holds no other suspect; their rings are dropped meanwhile, and no wake-up is missing. A suspect: ${SUSPECT_MEANING}`}
                      data-testid="signal-suspect"
                    >
                      {int(signal.suspect)} suspect{signal.suspect === 1 ? '' : 's'} waiting
                    </span>
                  ) : (signal.missing === 0 || signal.missing === null) && signal.unhandled > 0 ? (
                    <span className="text-zinc-500" title="due jobs of types no live worker on this queue has a handler for: they wait for a worker that registers the type; no wake-up is missing" data-testid="signal-unhandled">
                      {int(signal.unhandled)} with no handler
                    </span>
                  ) : signal.missing === 0 || signal.missing === null ? (
                    <span className="text-emerald-700 dark:text-emerald-300">ok</span>
                  ) : (
                    <span className="text-amber-700 dark:text-amber-300" title="due jobs with no id in Redis: the recover sweep re-rings them after a grace period">
                      {int(signal.missing)} without a wake-up
                    </span>
                  )}
                </td>
                <td className="tabular py-1.5 pr-3" data-testid="queue-workers">
                  {q.workersAlive > 0 ? (
                    int(q.workersAlive)
                  ) : q.due > 0 ? (
                    <span
                      className="text-xs font-medium text-red-700 dark:text-red-300"
                      title="no live worker consumes this queue: its due jobs wait, their attempts unspent, until one starts (a worker consumes the queues its --queues option names)"
                    >
                      none — jobs wait
                    </span>
                  ) : (
                    <span className="text-zinc-500">0</span>
                  )}
                </td>
                <td className="py-1.5 pr-3">{n(q, 'queued')}</td>
                <td className="py-1.5 pr-3">{n(q, 'running')}</td>
                <td className="py-1.5 pr-3">{n(q, 'retrying')}</td>
                <td className="py-1.5 pr-3">{n(q, 'failed')}</td>
                <td className="py-1.5 pr-3">{n(q, 'completed')}</td>
                <td className="py-1.5 pr-3 text-xs" data-testid="controls">
                  <div className="flex items-center gap-2">
                    {q.controls?.paused && (
                      <span className="rounded bg-amber-100 px-1.5 py-0.5 font-medium text-amber-800 dark:bg-amber-900 dark:text-amber-200">paused</span>
                    )}
                    {q.controls && <span className="tabular text-zinc-600 dark:text-zinc-400">{controlsText(q.controls)}</span>}
                  </div>
                </td>
                {onPause && onResume && (
                  <td className={`${STUCK} text-xs`}>
                    <ActionButton
                      unstyled
                      className={BUTTON}
                      onClick={() => (q.controls?.paused ? onResume(q.queue) : onPause(q.queue))}
                      disabled={busyQueue === q.queue}
                      why={q.controls?.paused ? resumeWhy : pauseWhy}
                      aria-label={`${q.controls?.paused ? 'Resume' : 'Pause'} queue ${visible(q.queue)}`}
                    >
                      {q.controls?.paused ? 'Resume' : 'Pause…'}
                    </ActionButton>
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollFrame>
  );
}
