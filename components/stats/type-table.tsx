import Link from 'next/link';
import type { StatsDto } from '@/lib/api/types';
import { int, runTime } from '@/lib/ui/format';
import { UserText } from '../ui/user-text';
import { ScrollFrame } from '../ui/scroll-frame';

type TypeRow = StatsDto['types']['rows'][number];

/** Failed attempts (retried or to the dead letter) among those that ended with an outcome, as a percentage; null with none. */
export function failureRate(r: Pick<TypeRow, 'completed' | 'retried' | 'failed'>): number | null {
  const ended = r.completed + r.retried + r.failed;
  return ended > 0 ? (100 * (r.retried + r.failed)) / ended : null;
}

/**
 * A failure rate as the table shows it: one decimal near either end, so that a type with any
 * success left never reads "100 %" (99.67 is 99.7 %) and a rare failure never reads "0 %".
 */
export const percent = (p: number | null) =>
  p === null ? '—' : p === 0 ? '0 %' : p < 0.1 ? '<0.1 %' : p < 100 && p >= 99.95 ? '>99.9 %' : `${p.toFixed(p < 10 || (p > 99 && p < 100) ? 1 : 0)} %`;
const jobsOf = (r: TypeRow, status?: string) =>
  `/jobs?${new URLSearchParams({ queue: r.queue, type: r.type, ...(status ? { status } : {}) })}`;

/**
 * Per queue and job type, what the workers' attempts did in the window: which job fails, which
 * got slow (run time quantiles from the workers' histograms, interpolated within a bucket).
 */
/** Runs a p95 is shown from: of fewer, it is one or two runs' time, not a percentile. */
const P95_RUNS_MIN = 20;

const LEASE_LOST_TITLE =
  "attempts whose lease ran out: the worker was killed (a poison job that crashes its process, the OOM killer), stalled (a handler that blocks the event loop) or cut off from the database. A crash counts against every job its process held: the type with the most is the likely cause, its jobs' attempts say. Read from the attempts themselves, so a loss no worker lived to report is here too. Not in the failure rate: the handler did not fail, its worker did";

/**
 * A run-time quantile as the table shows it: past the histogram's top bound (more than the
 * share 1 - q of the runs took longer) it is "> 1 h", not the bound itself, which read as a
 * job that takes an hour.
 */
function quantile(r: TypeRow, q: number): string {
  const value = q === 0.5 ? r.runP50Ms : r.runP95Ms;
  return r.runsPastTop > (1 - q) * r.runs ? `> ${runTime(value)}` : runTime(value);
}

export function TypeTable({ rows }: { rows: TypeRow[] }) {
  return (
    <ScrollFrame>
      <table className="w-full text-sm" data-testid="type-table">
        <thead className="text-left text-xs uppercase tracking-wide text-zinc-500">
          <tr>
            <th className="py-1 pr-3">Type</th>
            <th className="py-1 pr-3">Queue</th>
            <th className="py-1 pr-3 text-right">Completed</th>
            <th className="py-1 pr-3 text-right" title="attempts that failed with attempts left: the job runs again after a backoff">
              Retried
            </th>
            <th className="py-1 pr-3 text-right" title="attempts that failed for good: the job is in the dead letter">
              Failed
            </th>
            <th className="py-1 pr-3 text-right">Cancelled</th>
            <th className="py-1 pr-3 text-right" title="attempts the handler put off (SnoozeError): no failure, the attempt given back">
              Snoozed
            </th>
            <th className="py-1 pr-3 text-right" title={LEASE_LOST_TITLE}>
              Lease lost
            </th>
            <th className="py-1 pr-3 text-right" title="retried and failed attempts among those that completed, retried or failed">
              Failure rate
            </th>
            <th className="py-1 pr-3 text-right" title="handler run time: median and 95th percentile of the runs that ended (within a histogram bucket)">
              Run time p50 / p95
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const rate = failureRate(r);
            return (
              <tr key={`${r.queue}\u0000${r.type}`} className="border-t border-zinc-100 dark:border-zinc-800" data-testid="type-row" data-type={r.type} data-queue={r.queue}>
                <td className="min-w-32 py-1 pr-3 font-mono text-xs wrap-anywhere">
                  <Link href={jobsOf(r)} className="hover:underline">
                    <UserText text={r.type} />
                  </Link>
                </td>
                <td className="min-w-24 py-1 pr-3 wrap-anywhere">
                  <UserText text={r.queue} />
                </td>
                <td className="tabular py-1 pr-3 text-right" data-testid="type-completed">
                  {int(r.completed)}
                </td>
                <td className={`tabular py-1 pr-3 text-right ${r.retried > 0 ? 'text-amber-700 dark:text-amber-300' : ''}`} data-testid="type-retried">
                  {int(r.retried)}
                </td>
                <td className="tabular py-1 pr-3 text-right" data-testid="type-failed">
                  {r.failed > 0 ? (
                    <Link
                      href={jobsOf(r, 'failed')}
                      className="text-red-700 hover:underline dark:text-red-300"
                      title="attempts that failed for good in the window; the link lists this type's jobs in the dead letter now (a job that failed, was requeued and failed again counts twice here and once there; one requeued since, not at all)"
                    >
                      {int(r.failed)}
                    </Link>
                  ) : (
                    0
                  )}
                </td>
                <td className="tabular py-1 pr-3 text-right">{int(r.cancelled)}</td>
                <td className="tabular py-1 pr-3 text-right" data-testid="type-snoozed">
                  {int(r.snoozed)}
                </td>
                <td className={`tabular py-1 pr-3 text-right ${r.leaseLost > 0 ? 'font-medium text-red-700 dark:text-red-300' : ''}`} data-testid="type-lease-lost">
                  {int(r.leaseLost)}
                </td>
                <td className={`tabular py-1 pr-3 text-right ${(rate ?? 0) > 0 ? 'text-amber-700 dark:text-amber-300' : ''}`} data-testid="type-failure-rate">
                  {percent(rate)}
                </td>
                <td
                  className="tabular whitespace-nowrap py-1 pr-3 text-right"
                  data-testid="type-run-time"
                  title={r.runs > 0 ? `${int(r.runs)} run${r.runs === 1 ? '' : 's'}, mean ${runTime(r.runMeanMs)}${r.runs < P95_RUNS_MIN ? `; no p95 of fewer than ${P95_RUNS_MIN}` : ''}` : 'no run ended in the window'}
                >
                  {quantile(r, 0.5)} / {r.runs > 0 && r.runs < P95_RUNS_MIN ? <span className="text-zinc-400">–</span> : quantile(r, 0.95)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollFrame>
  );
}
