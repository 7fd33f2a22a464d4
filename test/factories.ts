/**
 * Test factories: put job rows in any state directly (time by data: backdate a lease
 * instead of waiting for it). Test-only code; production code writes job state only
 * through lib/queue/ops.
 */
import type { Executor } from '../lib/db/client';
import type { JobStatus } from '../lib/queue/status';

export interface JobFields {
  queue?: string;
  type?: string;
  status?: JobStatus;
  payload?: unknown;
  attemptCount?: number;
  maxAttempts?: number;
  workerId?: string | null;
  /** Lease end relative to the database's now(), in ms (negative = expired). */
  leaseInMs?: number;
  /** run_at relative to now(), in ms. */
  runInMs?: number;
  cancelRequested?: boolean;
  /** Leases lost in a row before this row (see SUSPECT_STREAK). */
  leaseLostStreak?: number;
  priority?: number;
}

export async function insertJob(db: Executor, f: JobFields = {}): Promise<string> {
  const status = f.status ?? 'queued';
  const running = status === 'running';
  const terminal = ['completed', 'failed', 'cancelled'].includes(status);
  const attempt = f.attemptCount ?? (running || terminal ? 1 : 0);
  const { rows } = await db.query(
    `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, worker_id,
                       heartbeat_at, lease_expires_at, run_at, started_at, finished_at, cancel_requested_at, lease_lost_streak, priority)
     VALUES ($1, $2, $3::job_status, $4::jsonb, $5, $6, $6, $7,
             CASE WHEN $8 THEN now() END,
             CASE WHEN $8 THEN now() + $9::int * interval '1 ms' END,
             now() + $10::int * interval '1 ms',
             CASE WHEN $8 OR $11 THEN now() END,
             CASE WHEN $11 THEN now() END,
             CASE WHEN $12 THEN now() END, $13, $14)
     RETURNING job_id`,
    [
      f.queue ?? 'default',
      f.type ?? 'demo.sleep',
      status,
      JSON.stringify(f.payload ?? { ms: 10 }),
      attempt,
      f.maxAttempts ?? 3,
      running ? (f.workerId ?? 'test-worker') : (f.workerId ?? null),
      running,
      f.leaseInMs ?? 30_000,
      f.runInMs ?? 0,
      terminal,
      !!f.cancelRequested,
      f.leaseLostStreak ?? 0,
      f.priority ?? 0,
    ],
  );
  return String(rows[0].job_id);
}

export async function jobRow(db: Executor, id: string) {
  const { rows } = await db.query('SELECT * FROM jobs WHERE job_id = $1', [id]);
  return rows[0];
}

export async function statusCounts(db: Executor): Promise<Record<string, number>> {
  const { rows } = await db.query('SELECT status, count(*)::int AS n FROM jobs GROUP BY status');
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}
