/** Whether the recover sweep has stopped, as the overview tells it (console-stats.ts sweptAgoMs). */
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
