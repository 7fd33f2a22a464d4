/** Whether the recover sweep has stopped, as the console tells it (console-stats.ts sweptAgoMs). */
import type { StatsDto } from '../api/types';

type SweepInput = Pick<StatsDto, 'workersAlive' | 'sweptAgoMs' | 'sweepStaleAfterMs'>;

/**
 * How long the recover sweep has not run, when that is long enough to call it stopped while
 * workers are alive (every sweep failing, or its lock held by a session that does not sweep:
 * the jobs only the sweep moves on stay running); null otherwise. With no worker alive nobody
 * sweeps by design (the overview says so apart), and a sweep never recorded is not judged (the
 * migration starts the clock).
 * Judged on the snapshot alone: `snapshotAgeMs` (how old the snapshot is) is added to the
 * time told, not to the judgement. A snapshot's age is the console's, not the sweep's: the
 * first viewer after a quiet minute is served the last snapshot (stats-cache.ts, up to
 * MAX_IDLE_STALE_MS old) while a fresh one is read, and counting its age would call a sweep
 * that ran a second before it stopped, until the fresh one came.
 */
export function sweepStoppedFor(s: SweepInput, snapshotAgeMs: number): number | null {
  if (s.workersAlive === 0 || s.sweptAgoMs === null || s.sweptAgoMs <= s.sweepStaleAfterMs) return null;
  return s.sweptAgoMs + Math.max(0, snapshotAgeMs);
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

/**
 * Whether a live worker's claim takes over this job's expired lease without the sweep
 * (statements/claim.ts jobClaimExpired, what a worker with a free slot runs every poll): a queue
 * that is not controlled (paused or limited), a live worker on it with the type's handler,
 * attempts left and no cancel asked. Every other expired lease only the sweep (or Recover)
 * moves on: while the sweep has stopped, nothing does.
 */
export function claimTakesOver(
  job: { attemptCount: number; maxAttempts: number; cancelRequestedAt?: string | null },
  workers: { withHandler: number; queueControlled: boolean },
): boolean {
  return !workers.queueControlled && workers.withHandler > 0 && job.attemptCount < job.maxAttempts && !job.cancelRequestedAt;
}

/** What a job's page says moves its expired lease on (before "Recover does it now."). */
export function expiredLeaseMover(sweep: Sweep, claimable: boolean, fmt: (ms: number) => string): string {
  if (sweep.state === 'no-workers') return 'No worker is alive to run the recover sweep: nothing moves the job on until one starts.';
  if (sweep.state === 'stopped')
    return claimable
      ? `The recover sweep has not run for ${fmt(sweep.agoMs)} although workers are alive (the overview says why); a live worker of this queue takes the lease over when it has a free slot;`
      : `The recover sweep has not run for ${fmt(sweep.agoMs)} although workers are alive (the overview says why): nothing moves the job on until it runs again.`;
  return 'The recover sweep moves the job to retrying (or failed, with no attempts left) within a few seconds;';
}
