/** Whether the recover sweep has stopped, as the console tells it (console-stats.ts sweptAgoMs). */
import type { StatsDto } from '../api/types';

type SweepInput = Pick<StatsDto, 'workersAlive' | 'sweptAgoMs' | 'sweepStaleAfterMs'>;

/**
 * How long the recover sweep has not run, when that is long enough to call it stopped while
 * workers are alive (every sweep failing, or its lock held by a session that does not sweep:
 * the jobs only the sweep moves on stay running); null otherwise. With no worker alive nobody
 * sweeps by design (the overview says so apart), and a sweep never recorded is not judged (the
 * migration starts the clock).
 * `snapshotAgeMs`: how old the stats snapshot is, added to its age.
 */
export function sweepStoppedFor(s: SweepInput, snapshotAgeMs: number): number | null {
  if (s.workersAlive === 0 || s.sweptAgoMs === null) return null;
  const ago = s.sweptAgoMs + Math.max(0, snapshotAgeMs);
  return ago > s.sweepStaleAfterMs ? ago : null;
}

/**
 * Who moves an expired lease on, as a lease's badge and a job's page tell it: the sweep of
 * the live workers; nobody, with no worker alive; or nobody since the sweep stopped `agoMs`
 * ago although workers are alive (sweepStoppedFor).
 */
export type Sweep = { state: 'sweeping' } | { state: 'no-workers' } | { state: 'stopped'; agoMs: number };

export const SWEEPING: Sweep = { state: 'sweeping' };

export function sweepOf(s: SweepInput, snapshotAgeMs: number): Sweep {
  if (s.workersAlive === 0) return { state: 'no-workers' };
  const agoMs = sweepStoppedFor(s, snapshotAgeMs);
  return agoMs === null ? SWEEPING : { state: 'stopped', agoMs };
}
