/**
 * How many jobs a list's filters match, when the overview's shared counts already say it: a
 * status, a queue, or both, and nothing else (a search or a time window needs a count of its
 * own, which at a million rows is not free). Exact below the counts' cap, else an estimate
 * (`≈`) or a floor (`≥`); null when the counts cannot say (another filter, a queue past the
 * listed ones, a share the statistics do not know).
 */
import type { JobFilters } from '../api/filters';
import type { StatsDto } from '../api/types';
import { JOB_STATUSES } from '../queue/status';
import { compact, int } from './format';

export function matchingCount(stats: Pick<StatsDto, 'counts' | 'kinds' | 'queues'> & { refreshFailing?: boolean }, f: JobFilters): string | null {
  // A snapshot served on while the database is away says nothing of now.
  if (stats.refreshFailing) return null;
  const used = Object.entries(f).filter(([, v]) => v !== undefined && v !== '');
  if (used.some(([k]) => k !== 'status' && k !== 'queue')) return null;
  const source = f.queue ? stats.queues.find((q) => q.queue === f.queue) : stats;
  if (!source) return null;
  const statuses = f.status ? [f.status] : JOB_STATUSES;
  let n = 0;
  let kind: 'exact' | 'estimate' | 'atLeast' = 'exact';
  for (const s of statuses) {
    const k = source.kinds[s];
    if (k === 'unknown') return null;
    if (k === 'estimate') kind = 'estimate';
    else if (k === 'atLeast' && kind === 'exact') kind = 'atLeast';
    n += source.counts[s];
  }
  const jobs = n === 1 && kind === 'exact' ? 'job matches' : 'jobs match';
  return kind === 'exact' ? `${int(n)} ${jobs}` : kind === 'estimate' ? `≈${compact(n)} ${jobs}` : `≥ ${int(n)} ${jobs}`;
}
