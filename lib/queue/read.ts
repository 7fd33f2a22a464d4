/**
 * Read models for the console, the API and the CLI. Nothing here decides about state:
 * actions go through ops.ts, which re-checks everything in its own statements.
 * Reads are keyset-paginated (never OFFSET) and served by the indexes in schema.ts.
 */
import type { Executor } from '../db/client';
import { type Job, toJob } from './job';
import type { AttemptOutcome, JobStatus } from './status';
import { JOB_STATUSES } from './status';

export interface ListFilters {
  status?: JobStatus;
  queue?: string;
  type?: string;
  worker?: string;
  /** An id, or text searched in the last error. */
  q?: string;
  /** Keyset cursor: list jobs with a smaller id than this. */
  cursor?: string;
  limit: number;
}

export interface JobPage {
  jobs: (Job & { leaseRemainingMs: number | null })[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
  /** The database clock when the page was read (the console corrects countdowns with it). */
  dbNow: Date;
}

/** The WHERE clause (and its values) of a job list's filters; shared by listJobs and listJobIds. */
function filterClause(f: Omit<ListFilters, 'limit'>): { where: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (cond: (p: string) => string, v: unknown) => {
    values.push(v);
    where.push(cond(`$${values.length}`));
  };
  if (f.status) add((p) => `status = ${p}::job_status`, f.status);
  if (f.queue) add((p) => `queue = ${p}`, f.queue);
  if (f.type) add((p) => `type = ${p}`, f.type);
  if (f.worker) add((p) => `worker_id = ${p}`, f.worker);
  if (f.q) {
    if (/^[1-9][0-9]{0,18}$/.test(f.q)) add((p) => `job_id = ${p}::bigint`, f.q);
    else add((p) => `error ILIKE ${p}`, `%${f.q.replace(/[\\%_]/g, (c) => '\\' + c)}%`);
  }
  if (f.cursor) add((p) => `job_id < ${p}::bigint`, f.cursor);
  return { where: where.length ? 'WHERE ' + where.join(' AND ') : '', values };
}

export async function listJobs(db: Executor, f: ListFilters): Promise<JobPage> {
  const { where, values } = filterClause(f);
  values.push(f.limit + 1);
  const { rows } = await db.query(
    `SELECT *, extract(epoch FROM lease_expires_at - now()) * 1000 AS lease_remaining_ms, now() AS db_now
       FROM jobs ${where}
      ORDER BY job_id DESC
      LIMIT $${values.length}`,
    values,
  );
  const page = rows.slice(0, f.limit);
  return {
    jobs: page.map((r) => ({
      ...toJob(r),
      leaseRemainingMs: r.lease_remaining_ms === null ? null : Number(r.lease_remaining_ms),
    })),
    nextCursor: rows.length > f.limit ? String(page[page.length - 1]!.job_id) : null,
    dbNow: rows[0]?.db_now ?? (await dbNow(db)),
  };
}

/**
 * The ids of one keyset page of a job list (newest first), without the rows: what bulk
 * actions resolve a filter to, page by page. nextCursor is null on the last page.
 */
export async function listJobIds(db: Executor, f: ListFilters): Promise<{ ids: string[]; nextCursor: string | null }> {
  const { where, values } = filterClause(f);
  values.push(f.limit + 1);
  const { rows } = await db.query(`SELECT job_id FROM jobs ${where} ORDER BY job_id DESC LIMIT $${values.length}`, values);
  const ids = rows.slice(0, f.limit).map((r) => String(r.job_id));
  return { ids, nextCursor: rows.length > f.limit ? ids[ids.length - 1]! : null };
}

export async function dbNow(db: Executor): Promise<Date> {
  const { rows } = await db.query('SELECT now() AS now');
  return rows[0].now;
}

export interface Attempt {
  attempt: number;
  workerId: string;
  startedAt: Date;
  heartbeatAt: Date | null;
  finishedAt: Date | null;
  /** null while the attempt is running. */
  outcome: AttemptOutcome | null;
  error: string | null;
  errorStack: string | null;
}

export interface JobDetail {
  job: Job;
  attempts: Attempt[];
  leaseRemainingMs: number | null;
  dbNow: Date;
}

export async function getJob(db: Executor, id: string): Promise<JobDetail | null> {
  const { rows } = await db.query(
    `SELECT *, extract(epoch FROM lease_expires_at - now()) * 1000 AS lease_remaining_ms, now() AS db_now
       FROM jobs WHERE job_id = $1::bigint`,
    [id],
  );
  const r = rows[0];
  if (!r) return null;
  const job = toJob(r);
  const att = await db.query(
    `SELECT attempt, worker_id, started_at, heartbeat_at, finished_at, outcome, error, error_stack
       FROM job_attempts WHERE job_id = $1::bigint ORDER BY attempt`,
    [id],
  );
  const attempts: Attempt[] = att.rows.map((a) => ({
    attempt: a.attempt,
    workerId: a.worker_id,
    startedAt: a.started_at,
    heartbeatAt: a.heartbeat_at,
    finishedAt: a.finished_at,
    outcome: a.outcome,
    error: a.error,
    errorStack: a.error_stack,
  }));
  // The running attempt has no row yet (an attempt row is written when it ends).
  if (job.status === 'running' && !attempts.some((a) => a.attempt === job.attemptCount)) {
    attempts.push({
      attempt: job.attemptCount,
      workerId: job.workerId!,
      startedAt: job.startedAt!,
      heartbeatAt: job.heartbeatAt,
      finishedAt: null,
      outcome: null,
      error: null,
      errorStack: null,
    });
  }
  return {
    job,
    attempts,
    leaseRemainingMs: r.lease_remaining_ms === null ? null : Number(r.lease_remaining_ms),
    dbNow: r.db_now,
  };
}

export interface Stats {
  counts: Record<JobStatus, number>;
  queues: { queue: string; counts: Record<JobStatus, number> }[];
  oldestQueuedAgeMs: number | null;
  runningExpired: number;
  workersAlive: number;
  dbNow: Date;
}

const zeroCounts = () => Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;

export async function getStats(db: Executor): Promise<Stats> {
  const [byQueue, extra] = await Promise.all([
    db.query(`SELECT queue, status, count(*)::bigint AS n FROM jobs GROUP BY queue, status`),
    db.query(
      `SELECT (SELECT extract(epoch FROM now() - min(run_at)) * 1000 FROM jobs
                WHERE status IN ('queued', 'retrying') AND run_at <= now()) AS oldest_ms,
              (SELECT count(*) FROM jobs WHERE status = 'running' AND lease_expires_at < now()) AS expired,
              (SELECT count(*) FROM workers WHERE stopped_at IS NULL AND heartbeat_at > now() - interval '1 minute') AS alive,
              now() AS db_now`,
    ),
  ]);
  const counts = zeroCounts();
  const queues = new Map<string, Record<JobStatus, number>>();
  for (const r of byQueue.rows) {
    const n = Number(r.n);
    counts[r.status as JobStatus] += n;
    if (!queues.has(r.queue)) queues.set(r.queue, zeroCounts());
    queues.get(r.queue)![r.status as JobStatus] += n;
  }
  const e = extra.rows[0];
  return {
    counts,
    queues: [...queues].map(([queue, c]) => ({ queue, counts: c })).sort((a, b) => a.queue.localeCompare(b.queue)),
    oldestQueuedAgeMs: e.oldest_ms === null ? null : Math.round(Number(e.oldest_ms)),
    runningExpired: Number(e.expired),
    workersAlive: Number(e.alive),
    dbNow: e.db_now,
  };
}

export interface WorkerRow {
  workerId: string;
  host: string;
  pid: number;
  queues: string[];
  concurrency: number;
  startedAt: Date;
  heartbeatAt: Date;
  stoppedAt: Date | null;
  jobsInHand: number;
  heartbeatAgeMs: number;
}

export async function listWorkers(db: Executor): Promise<WorkerRow[]> {
  const { rows } = await db.query(
    `SELECT w.*, extract(epoch FROM now() - w.heartbeat_at) * 1000 AS heartbeat_age_ms,
            (SELECT count(*) FROM jobs j WHERE j.status = 'running' AND j.worker_id = w.worker_id) AS jobs_in_hand
       FROM workers w
      ORDER BY w.stopped_at IS NOT NULL, w.heartbeat_at DESC
      LIMIT 500`,
  );
  return rows.map((r) => ({
    workerId: r.worker_id,
    host: r.host,
    pid: r.pid,
    queues: r.queues,
    concurrency: r.concurrency,
    startedAt: r.started_at,
    heartbeatAt: r.heartbeat_at,
    stoppedAt: r.stopped_at,
    jobsInHand: Number(r.jobs_in_hand),
    heartbeatAgeMs: Math.round(Number(r.heartbeat_age_ms)),
  }));
}
