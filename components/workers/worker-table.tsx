import Link from 'next/link';
import type { WorkerDto } from '@/lib/api/types';
import { ago, dateTime, int, ms } from '@/lib/ui/format';
import { SUSPECT_MEANING } from '@/lib/ui/suspect';
import { ActionButton } from '../actions/action-button';
import { Badge } from '../ui/badge';
import { PageTable } from '../ui/table';
import { UserText } from '../ui/user-text';

const metric = (w: WorkerDto, k: string) => {
  const v = (w.metrics as Record<string, unknown>)[k];
  return typeof v === 'number' ? int(v) : '—';
};

/** Resident memory in MB, as last reported; a process of an earlier version reported none. */
const rss = (w: WorkerDto) => {
  const v = (w.metrics as Record<string, unknown>).rssBytes;
  return typeof v === 'number' ? `${int(v / 2 ** 20)} MB` : '—';
};

/**
 * Worker processes: where they run, since when, their last heartbeat, the jobs they hold, their
 * memory; a live one can be quieted (it claims no new job, those in hand finish) and resumed.
 */
export function WorkerTable({
  workers,
  nowMs,
  staleAfterMs,
  readAt,
  onQuiet,
  quietWhy,
  busyWorker,
}: {
  workers: WorkerDto[];
  nowMs: number;
  staleAfterMs: number;
  readAt: string;
  /** Quiet (true) or resume (false) a worker; no buttons without it. */
  onQuiet?: (workerId: string, quiet: boolean) => void;
  /** Why the signed-in role may not (the buttons stay, disabled, saying so). */
  quietWhy?: string | null;
  busyWorker?: string;
}) {
  return (
    <PageTable
      testid="worker-table"
      headings={[
        'Worker',
        'State',
        'Host · pid',
        'Queues · job types',
        'Started',
        'Last heartbeat',
        { label: 'Jobs in hand', title: 'running jobs whose lease names this worker / slots' },
        { label: 'Completed · failed · lease lost', title: 'attempts this process ended since it started: completed, failed for good (into the dead letter), lease lost. A job requeued and failed again counts twice.' },
        { label: 'Memory', title: "the process's resident memory (RSS) as of its last heartbeat" },
      ]}
    >
      {workers.map((w) => {
        const age = nowMs - ms(w.heartbeatAt)!;
        // Stale as of the read; silent for longer only since then is "not refreshed": the
        // rows have not been read again (refresh paused), and it may well have reported.
        const stale = !w.stoppedAt && ms(readAt)! - ms(w.heartbeatAt)! > staleAfterMs;
        const unseen = !w.stoppedAt && !stale && age > staleAfterMs;
        return (
          <tr key={w.workerId} className="border-b border-zinc-100 last:border-0 dark:border-zinc-800/60" data-testid={`worker-${w.workerId}`}>
            <td className="min-w-[9rem] break-all px-3 py-2 font-mono text-xs">
              <UserText text={w.workerId} />
            </td>
            <td className="px-3 py-2">
              {w.stoppedAt && w.exit ? (
                <Badge tone="orange" title={`${w.exit}: its supervisor saw it end and started another; the jobs it held are recovered when their leases run out`}>
                  died
                </Badge>
              ) : w.stoppedAt ? (
                <Badge>stopped</Badge>
              ) : stale ? (
                <Badge tone="red" title="no heartbeat for longer than a lease: its jobs' leases have run out and recover takes them">
                  stale
                </Badge>
              ) : unseen ? (
                <Badge title="no heartbeat since this page last read the workers, for longer than a lease: refresh is paused, or the next read is not back. Refresh to see.">
                  <span data-testid="worker-unseen">not refreshed</span>
                </Badge>
              ) : w.quietAt ? (
                <Badge
                  tone="amber"
                  title={`quieted${w.quietBy ? ` by ${w.quietBy}` : ''} ${dateTime(w.quietAt)}: it claims no new job; those in hand finish${w.quietSeen ? '' : ' (not confirmed yet: it reads the request with its next heartbeat and confirms it with the one after)'}`}
                >
                  <span data-testid="worker-quiet">{w.quietSeen ? 'quiet' : 'quieting…'}</span>
                </Badge>
              ) : (
                <Badge tone="emerald">live</Badge>
              )}
              {w.lostJobs.length > 0 && (
                // After a crash, the first question: which job took it down? The suspect among these.
                <span className="mt-1 block text-xs text-zinc-600 dark:text-zinc-400" data-testid="worker-lost-jobs">
                  in hand:{' '}
                  {w.lostJobs.map((j, k) => (
                    <span key={j.id}>
                      {k > 0 && ', '}
                      <Link href={`/jobs/${j.id}`} className="hover:underline">
                        #{j.id}
                      </Link>
                      {j.suspect && (
                        <span className="font-medium text-red-700 dark:text-red-300" title={SUSPECT_MEANING}>
                          {' '}
                          (suspect)
                        </span>
                      )}
                    </span>
                  ))}
                  {w.lostJobsTotal > w.lostJobs.length && (
                    <>
                      {', '}
                      <Link href={`/jobs?worker=${encodeURIComponent(w.workerId)}`} className="hover:underline" data-testid="worker-lost-more">
                        +{int(w.lostJobsTotal - w.lostJobs.length)} more
                      </Link>
                    </>
                  )}
                </span>
              )}
              {onQuiet && !w.stoppedAt && (
                <span className="mt-1 block">
                  <ActionButton
                    size="sm"
                    testid="worker-quiet-button"
                    why={quietWhy ?? (!w.quietAt && !('quiet' in (w.metrics as Record<string, unknown>)) ? 'This process does not read quiet requests: an earlier version, or it has not reported since it started.' : null)}
                    disabled={busyWorker === w.workerId}
                    onClick={() => onQuiet(w.workerId, !w.quietAt)}
                    title={w.quietAt ? 'claim jobs again' : 'claim no new job; the jobs in hand finish (before maintenance or a deploy)'}
                  >
                    {w.quietAt ? 'Resume' : 'Quiet'}
                  </ActionButton>
                </span>
              )}
            </td>
            <td className="px-3 py-2 text-xs [overflow-wrap:anywhere]">
              <UserText text={w.host} /> · <span className="whitespace-nowrap">{w.pid}</span>
            </td>
            <td className="min-w-[9rem] break-all px-3 py-2 text-xs">
              <UserText text={w.queues.join(', ')} />
              {/* The types it claims (it claims no other); none recorded: an earlier version, which claimed any. */}
              {w.types && (
                <span className="mt-0.5 block text-zinc-500 [overflow-wrap:anywhere] [word-break:normal]" data-testid="worker-types">
                  handles <UserText text={w.types.join(', ')} />
                </span>
              )}
            </td>
            <td className="whitespace-nowrap px-3 py-2 text-xs">{dateTime(w.startedAt)}</td>
            <td className={`tabular whitespace-nowrap px-3 py-2 text-xs ${stale ? 'text-red-700 dark:text-red-300' : ''}`}>
              {w.stoppedAt ? `${w.exit ? 'died' : 'stopped'} ${ago(nowMs - ms(w.stoppedAt)!)}` : ago(age)}
              {w.exit && (
                <span className="block text-zinc-500">
                  <UserText text={w.exit} />
                </span>
              )}
            </td>
            <td className="tabular px-3 py-2">
              {w.stoppedAt ? (
                // Its running jobs have moved on (or will, when their leases end): every job
                // it ran last or held when it died (the worker filter reads its lost
                // attempts), whatever became of it, is what an operator looks for.
                <Link href={`/jobs?worker=${encodeURIComponent(w.workerId)}`} className="text-xs hover:underline" data-testid="worker-jobs">
                  {w.jobsInHand > 0 ? `${w.jobsInHand} still leased · ` : ''}its jobs
                </Link>
              ) : (
                <>
                  <Link href={`/jobs?status=running&worker=${encodeURIComponent(w.workerId)}`} className="hover:underline">
                    {w.jobsInHand}
                  </Link>
                  <span className="text-xs text-zinc-500"> / {w.concurrency}</span>
                </>
              )}
            </td>
            <td className="tabular px-3 py-2 text-xs">
              {metric(w, 'completed')} · {metric(w, 'failed')} · {metric(w, 'leaseLost')}
              {w.exit && (
                <span className="block text-zinc-500" title="a process that died sends no last report: what it did after its last heartbeat is in its jobs' attempts, not here">
                  as last reported
                </span>
              )}
            </td>
            <td className="tabular whitespace-nowrap px-3 py-2 text-xs" data-testid="worker-rss">
              {rss(w)}
            </td>
          </tr>
        );
      })}
    </PageTable>
  );
}
