import Link from 'next/link';
import { JOB_STATUSES, type JobStatus } from '@/lib/api/statuses';
import type { CountKind } from '@/lib/api/types';
import { duration, int } from '@/lib/ui/format';

const TONE: Record<JobStatus, string> = {
  queued: 'text-sky-700 dark:text-sky-300',
  running: 'text-amber-700 dark:text-amber-300',
  retrying: 'text-orange-700 dark:text-orange-300',
  completed: 'text-emerald-700 dark:text-emerald-300',
  failed: 'text-red-700 dark:text-red-300',
  cancelled: 'text-zinc-500 dark:text-zinc-400',
};

export interface StatusCountsProps {
  counts: Record<JobStatus, number>;
  kinds?: Record<JobStatus, CountKind>;
  /** How old the exact counts are. */
  ageMs?: number | null;
  /** How old the statistics behind the estimates are (time since ANALYZE). */
  estimateAgeMs?: number | null;
  countCap?: number;
}

/** Counts per status, each labelled exact (with its age) or ≈ (with the age of the statistics behind it). */
export function StatusCounts({ counts, kinds, ageMs, estimateAgeMs, countCap }: StatusCountsProps) {
  return (
    // Cards that are links: plain blocks, since a <dl> may hold only <dt>/<dd> (or <div>s of them).
    <div className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-6">
      {JOB_STATUSES.map((s) => {
        const kind = kinds?.[s] ?? 'exact';
        return (
          <Link
            href={s === 'failed' ? '/dead-letter' : `/jobs?status=${s}`}
            key={s}
            className="rounded-lg border border-zinc-200 bg-white p-4 hover:border-zinc-400 dark:border-zinc-800 dark:bg-zinc-900 dark:hover:border-zinc-600"
            data-testid={`count-${s}`}
          >
            <span className="block text-xs uppercase tracking-wide text-zinc-500">{s}</span>
            <span className={`tabular mt-1 block text-2xl font-semibold ${TONE[s]}`} data-testid={`count-value-${s}`}>
              {kind === 'estimate' && (
                <span title="estimate" aria-label="approximately">
                  ≈
                </span>
              )}
              {kind === 'atLeast' && <span aria-label="at least">≥</span>}
              {int(counts[s])}
            </span>
            <p className="mt-1 text-[11px] text-zinc-500" data-testid={`count-kind-${s}`}>
              {kind === 'exact'
                ? `exact${ageMs !== null && ageMs !== undefined ? ` · ${duration(Math.max(0, ageMs))} old` : ''}`
                : kind === 'estimate'
                  ? `estimate · statistics ${estimateAgeMs !== null && estimateAgeMs !== undefined ? `${duration(estimateAgeMs)} old` : 'pending'}`
                  : `over ${int(countCap ?? 0)}; no statistics yet (ANALYZE)`}
            </p>
          </Link>
        );
      })}
    </div>
  );
}
