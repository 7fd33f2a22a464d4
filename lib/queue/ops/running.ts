import type { Executor } from '../../db/client';
import type { Lease } from '../job';
import type { Doorbell, Ring } from '../signal';
import * as sql from '../statements';
import type { AttemptOutcome, JobStatus } from '../status';
import type { JobKind } from '../type-metrics';
import { byJobId, intArray, run } from './internal';

/** The error of a cancelled attempt that was claimed ahead and never started (its handler never ran). */
export const CANCELLED_UNSTARTED = 'cancelled by an operator before it started (claimed ahead; the handler never ran)';

export interface HeartbeatResult {
  /** Leases renewed, with whether an operator asked to cancel the job. */
  renewed: Map<string, { cancelRequested: boolean }>;
  /** Jobs whose row another transaction held locked: not renewed this time, not lost either. */
  busy: Set<string>;
}

/**
 * jobHeartbeat — renew every lease this worker holds in one statement. A lease missing
 * from `renewed` is lost: the caller aborts that handler and writes nothing for it.
 */
export async function jobHeartbeat(
  db: Executor,
  p: { workerId: string; leaseMs: number; leases: readonly Lease[] },
): Promise<HeartbeatResult> {
  const renewed = new Map<string, { cancelRequested: boolean }>();
  const busy = new Set<string>();
  if (p.leases.length === 0) return { renewed, busy };
  const { rows } = await run(db, sql.jobHeartbeat, [
    intArray(p.leases.map((l) => l.jobId)),
    byJobId(p.leases, (l) => l.attempt),
    p.workerId,
    p.leaseMs,
  ]);
  for (const r of rows) {
    if (r.busy) busy.add(String(r.job_id));
    else renewed.set(String(r.job_id), { cancelRequested: r.cancel_requested });
  }
  return { renewed, busy };
}

/** jobCheckpoint — fenced save of a running job's progress; false = the lease is lost. */
export async function jobCheckpoint(
  db: Executor,
  p: { workerId: string; lease: Lease; name: string; value: unknown },
): Promise<boolean> {
  const { rowCount } = await run(db, sql.jobCheckpoint, [
    p.lease.jobId,
    p.workerId,
    p.lease.attempt,
    p.name,
    JSON.stringify(p.value ?? null),
  ]);
  return rowCount === 1;
}

/** jobComplete — fenced success; returns the ids whose completion was accepted. */
export async function jobComplete(
  db: Executor,
  p: { workerId: string; items: readonly (Lease & { resultKey?: string | null })[] },
): Promise<Set<string>> {
  if (p.items.length === 0) return new Set();
  const { rows } = await run(db, sql.jobComplete, [
    intArray(p.items.map((i) => i.jobId)),
    byJobId(p.items, (i) => i.attempt),
    byJobId(p.items, (i) => i.resultKey ?? null),
    p.workerId,
  ]);
  return new Set(rows.map((r) => String(r.job_id)));
}

/**
 * attemptOutcomes — how these attempts of this worker ended (the attempt history), for a
 * refused retry: an earlier try whose answer was lost may have been recorded.
 */
export async function attemptOutcomes(
  db: Executor,
  p: { workerId: string; leases: readonly Lease[] },
): Promise<Map<string, AttemptOutcome>> {
  if (p.leases.length === 0) return new Map();
  const { rows } = await run(db, sql.attemptOutcomes, [
    intArray(p.leases.map((l) => l.jobId)),
    intArray(p.leases.map((l) => l.attempt)),
    p.workerId,
  ]);
  return new Map(rows.map((r) => [String(r.job_id), r.outcome as AttemptOutcome]));
}

/** The leases a worker holds by the database (its running jobs): see jobsHeldBy. */
export async function leasesHeldBy(db: Executor, p: { workerId: string }): Promise<Lease[]> {
  const { rows } = await run(db, sql.jobsHeldBy, [p.workerId]);
  return rows.map((r) => ({ jobId: String(r.job_id), attempt: Number(r.attempt_count) }));
}

export interface FailItem extends Lease {
  error: string;
  stack?: string | null;
  /** Fail at once, without retries. */
  permanent?: boolean;
  /** Delay before the retry (ignored when the job goes to `failed`), or the snooze's. */
  backoffMs: number;
  /** Not a failure: the handler put the job off (SnoozeError). Queued for after backoffMs, the attempt given back; `error` is its message. */
  snooze?: boolean;
}

/** jobFail — fenced failure (or snooze); returns the new status of each job whose failure was accepted (`queued`: snoozed). */
export async function jobFail(
  db: Executor,
  p: { workerId: string; items: readonly FailItem[] },
): Promise<Map<string, { status: JobStatus; queue: string; runAt: Date }>> {
  const out = new Map<string, { status: JobStatus; queue: string; runAt: Date }>();
  if (p.items.length === 0) return out;
  const { rows } = await run(db, sql.jobFail, [
    p.items.map((i) => i.jobId),
    byJobId(p.items, (i) => i.attempt),
    byJobId(p.items, (i) => i.error),
    byJobId(p.items, (i) => i.stack ?? null),
    byJobId(p.items, (i) => !!i.permanent),
    byJobId(p.items, (i) => Math.max(0, Math.round(i.backoffMs))),
    p.workerId,
    byJobId(p.items, (i) => !!i.snooze),
  ]);
  for (const r of rows) out.set(String(r.job_id), { status: r.status, queue: r.queue, runAt: r.run_at });
  return out;
}

/** jobCancelAck — the handler stopped after an operator's cancel: finish as cancelled. Returns the jobs ended, by id. */
export async function jobCancelAck(
  db: Executor,
  p: { workerId: string; leases: readonly Lease[]; unstarted: boolean },
): Promise<Map<string, JobKind>> {
  if (p.leases.length === 0) return new Map();
  const { rows } = await run(db, sql.jobCancelAck, [
    p.leases.map((l) => l.jobId),
    byJobId(p.leases, (l) => l.attempt),
    p.workerId,
    // Said apart in the job's history: an attempt claimed ahead and never run is not one
    // whose handler was stopped.
    p.unstarted ? CANCELLED_UNSTARTED : 'cancelled by an operator',
    !p.unstarted,
  ]);
  return new Map(rows.map((r) => [String(r.job_id), { queue: r.queue as string, type: r.type as string }]));
}

/**
 * jobRelease — hand leases back (shutdown): the jobs are queued again, due now. `unstarted`:
 * claimed ahead and never run (their lost-lease streak is kept), else their handlers ran
 * until handed back (it ends: see the statement).
 */
export async function jobRelease(
  db: Executor,
  p: { workerId: string; leases: readonly Lease[]; reason: string; unstarted: boolean; doorbell?: Doorbell | null },
): Promise<Ring[]> {
  if (p.leases.length === 0) return [];
  const { rows } = await run(db, sql.jobRelease, [
    p.leases.map((l) => l.jobId),
    byJobId(p.leases, (l) => l.attempt),
    p.workerId,
    p.reason,
    !p.unstarted,
  ]);
  const rings = rows.map((r) => ({ jobId: String(r.job_id), queue: r.queue as string, priority: r.priority as number }));
  if (p.doorbell) await p.doorbell.ring(rings, { front: true });
  return rings;
}
