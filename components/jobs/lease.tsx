import { ago, duration, ms, shortDuration } from '@/lib/ui/format';
import { SWEEPING, type Sweep } from '@/lib/ui/sweep';
import { Badge } from '../ui/badge';

export interface LeaseFields {
  status: string;
  workerId: string | null;
  leaseExpiresAt: string | null;
  heartbeatAt: string | null;
  attemptCount: number;
  maxAttempts: number;
  /**
   * When this row was read (the database clock of its read). A lease end that falls after
   * it was not seen: the row has not been read again since (refresh paused, or a row too
   * far down the list to be followed), and the worker may well have renewed the lease.
   */
  readAt?: string | null;
  /** The owner's supervisor saw it end ("killed by SIGKILL"): nothing renews the lease. */
  ownerGone?: string | null;
}

/** Remaining lease on the database clock; negative once expired. */
export const leaseRemaining = (j: LeaseFields, nowMs: number) => (j.leaseExpiresAt ? ms(j.leaseExpiresAt)! - nowMs : null);

/**
 * What a running job's lease looks like at nowMs: time left, expired (the row read after the
 * lease's end still showed it), or unseen (its end passed since the row was last read).
 */
export function leaseState(j: LeaseFields, nowMs: number): 'left' | 'expired' | 'unseen' | null {
  const left = leaseRemaining(j, nowMs);
  if (j.status !== 'running' || left === null) return null;
  if (left > 0) return 'left';
  return j.readAt && ms(j.readAt)! < ms(j.leaseExpiresAt!)! ? 'unseen' : 'expired';
}

/**
 * A running job's lease: countdown (ticks with nowMs), heartbeat age, and the expired badge.
 * `sweep`: who moves an expired lease on — the live workers' recover sweep, or nobody but a
 * peer's claim or an operator's Recover (no worker alive, or the sweep stopped).
 */
export function LeaseCountdown({ job, nowMs, sweep = SWEEPING }: { job: LeaseFields; nowMs: number; sweep?: Sweep }) {
  const state = leaseState(job, nowMs);
  const left = leaseRemaining(job, nowMs)!;
  if (state === null) return null;
  if (state === 'unseen')
    return (
      <Badge title="the lease would have ended after this row was read, and the row has not been read again (refresh is paused, or the row is far down the list): its worker may have renewed it. Refresh to see.">
        <span data-testid="lease-unseen">lease end passed — row not refreshed</span>
      </Badge>
    );
  if (state === 'expired' && sweep.state === 'stopped')
    return (
      <Badge
        tone="red"
        title={`the lease ran out ${duration(-left)} ago, and the recover sweep has not run for ${shortDuration(sweep.agoMs)} although workers are alive (every sweep failing, or a session holding its lock: the overview says how to find it): Recover moves the job on now`}
      >
        <span data-testid="lease-expired">expired — no recover sweep for {shortDuration(sweep.agoMs)}</span>
      </Badge>
    );
  if (state === 'expired' && sweep.state === 'no-workers')
    return (
      <Badge tone="red" title={`the lease ran out ${duration(-left)} ago and no worker is alive to run the recover sweep: Recover moves the job on now, or a worker that starts does`}>
        <span data-testid="lease-expired">expired — no live worker to recover it</span>
      </Badge>
    );
  if (state === 'expired')
    return (
      <Badge tone="red" title={`the lease ran out ${duration(-left)} ago; the recover sweep (or a Recover) moves the job on`}>
        <span data-testid="lease-expired">expired — will be recovered</span>
      </Badge>
    );
  if (job.ownerGone)
    return (
      <Badge
        tone="red"
        title={`its worker process ended (${job.ownerGone}), as its supervisor saw: nothing renews the lease, and when it runs out the recover sweep moves the job on (retried, or the dead letter when no attempts are left)`}
      >
        <span data-testid="owner-gone">
          worker died ({job.ownerGone}) — recovered when the lease ends in <span data-testid="lease-countdown">{duration(left)}</span>
        </span>
      </Badge>
    );
  return (
    <span className="tabular text-zinc-700 dark:text-zinc-300" title="time left on the lease (database clock)">
      lease <span data-testid="lease-countdown">{duration(left)}</span>
    </span>
  );
}

/** The lease and renewal interval the console is configured with (GET /api/console). */
export type Cadence = { leaseMs: number; heartbeatMs: number };

/**
 * Whether a running job's renewals have stopped coming: as of the row's read, no renewal for
 * one and a half renewal intervals, and a second more than one — so a renewal is missing: its
 * worker may have died or stalled, well before the lease runs out. Judged at the read (not
 * at nowMs), so a row that is simply not re-read is not called late.
 *
 * The interval is the console's LEASEHOLD_HEARTBEAT_MS (npm start shares it with its
 * workers) only when the job's own lease — from its last renewal to its end, which its
 * worker set — is the console's lease too: workers started with other settings renew on
 * their own schedule, and judging them by the console's called every job late (or none).
 * Otherwise, or unknown: a third of the job's lease, the workers' default. (Workers with the
 * console's lease but a longer LEASEHOLD_HEARTBEAT_MS of their own are not told apart: give
 * the console the same setting.)
 */
export function heartbeatLate(j: LeaseFields, nowMs: number, cadence?: Cadence | null): boolean {
  if (j.status !== 'running' || !j.heartbeatAt || !j.leaseExpiresAt) return false;
  const beat = ms(j.heartbeatAt)!;
  const lease = ms(j.leaseExpiresAt)! - beat;
  // Within 2 ms: both ends are the database's microsecond times, read to the millisecond.
  const interval = cadence && Math.abs(lease - cadence.leaseMs) <= 2 ? cadence.heartbeatMs : lease / 3;
  const seenAt = Math.min(nowMs, j.readAt ? ms(j.readAt)! : nowMs);
  // Half an interval late, and at least a second (short intervals on a busy machine jitter).
  return lease > 0 && seenAt - beat > Math.max(1.5 * interval, interval + 1_000);
}

export function HeartbeatAge({ job, nowMs, cadence }: { job: LeaseFields; nowMs: number; cadence?: Cadence | null }) {
  if (!job.heartbeatAt) return null;
  const age = nowMs - ms(job.heartbeatAt)!;
  if (heartbeatLate(job, nowMs, cadence))
    return (
      <span
        className="tabular text-orange-700 dark:text-orange-300"
        title={`no renewal for ${duration(age)}, a renewal missed: its worker may have died or stalled. Unless it renews, the lease runs out and the job is recovered.`}
        data-testid="heartbeat-age"
      >
        ♥ {ago(age)} · <span data-testid="heartbeat-late">late</span>
      </span>
    );
  return (
    <span className="tabular text-zinc-500 dark:text-zinc-400" title="last lease renewal (database clock)" data-testid="heartbeat-age">
      ♥ {ago(age)}
    </span>
  );
}

export function Attempts({ job }: { job: Pick<LeaseFields, 'attemptCount' | 'maxAttempts'> }) {
  return (
    <span className="tabular" title="attempts so far / attempts allowed" data-testid="attempts">
      {job.attemptCount}/{job.maxAttempts}
    </span>
  );
}
