import type { JobStatus } from '@/lib/queue/status';

const TONE: Record<JobStatus, string> = {
  queued: 'text-sky-700 dark:text-sky-300',
  running: 'text-amber-700 dark:text-amber-300',
  retrying: 'text-orange-700 dark:text-orange-300',
  completed: 'text-emerald-700 dark:text-emerald-300',
  failed: 'text-red-700 dark:text-red-300',
  cancelled: 'text-zinc-500 dark:text-zinc-400',
};

export function StatusCounts({ counts }: { counts: Record<JobStatus, number> }) {
  return (
    <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-6">
      {(Object.keys(TONE) as JobStatus[]).map((s) => (
        <div key={s} className="rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900" data-testid={`count-${s}`}>
          <dt className="text-xs uppercase tracking-wide text-zinc-500">{s}</dt>
          <dd className={`tabular mt-1 text-2xl font-semibold ${TONE[s]}`}>{counts[s].toLocaleString('en')}</dd>
        </div>
      ))}
    </dl>
  );
}
