import { ago, duration, ms } from '@/lib/ui/format';
import { Badge } from '../ui/badge';

export interface LeaseFields {
  status: string;
  workerId: string | null;
  leaseExpiresAt: string | null;
  heartbeatAt: string | null;
  attemptCount: number;
  maxAttempts: number;
}

/** Remaining lease on the database clock; negative once expired. */
export const leaseRemaining = (j: LeaseFields, nowMs: number) => (j.leaseExpiresAt ? ms(j.leaseExpiresAt)! - nowMs : null);

/** A running job's lease: countdown (ticks with nowMs), heartbeat age, and the expired badge. */
export function LeaseCountdown({ job, nowMs }: { job: LeaseFields; nowMs: number }) {
  const left = leaseRemaining(job, nowMs);
  if (job.status !== 'running' || left === null) return null;
  if (left <= 0)
    return (
      <Badge tone="red" title={`the lease ran out ${duration(-left)} ago; the recover sweep (or a Recover) moves the job on`}>
        <span data-testid="lease-expired">expired — will be recovered</span>
      </Badge>
    );
  return (
    <span className="tabular text-amber-700 dark:text-amber-300" title="time left on the lease (database clock)">
      lease <span data-testid="lease-countdown">{duration(left)}</span>
    </span>
  );
}

export function HeartbeatAge({ job, nowMs }: { job: LeaseFields; nowMs: number }) {
  if (!job.heartbeatAt) return null;
  return (
    <span className="tabular text-zinc-500 dark:text-zinc-400" title="last lease renewal (database clock)" data-testid="heartbeat-age">
      ♥ {ago(nowMs - ms(job.heartbeatAt)!)}
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
