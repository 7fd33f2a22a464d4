/**
 * The job row as the library sees it, and its JSON form for the API and the console
 * (ids as strings, ISO dates, camelCase).
 */
import type { JobStatus } from './status';

export interface Job {
  id: string;
  queue: string;
  type: string;
  status: JobStatus;
  payload: unknown;
  /** Claims so far; the fencing token of the current lease. */
  attemptCount: number;
  maxAttempts: number;
  attemptBudget: number;
  workerId: string | null;
  heartbeatAt: Date | null;
  leaseExpiresAt: Date | null;
  runAt: Date;
  /** 0 (the default) runs first, 9 last (PRIORITY_LEVELS); within a level, the oldest due job first. */
  priority: number;
  cancelRequestedAt: Date | null;
  idempotencyKey: string | null;
  /** At most one unfinished job holds it (see schema.ts). */
  singletonKey: string | null;
  resultKey: string | null;
  error: string | null;
  /** Saved progress by name (see ctx.checkpoint); null when the job never saved any. */
  checkpoints: Checkpoints | null;
  /** Consecutive attempts lost without a word from the worker (see schema.ts). */
  leaseLostStreak: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export type Checkpoints = Record<string, { value: unknown; attempt: number; at: string }>;

/** What a claim returns: what the worker and its handler need, nothing to parse in vain. */
export type ClaimedJob = Pick<
  Job,
  'id' | 'queue' | 'type' | 'status' | 'payload' | 'attemptCount' | 'maxAttempts' | 'attemptBudget' | 'workerId' | 'checkpoints' | 'leaseLostStreak' | 'priority'
> & {
  /** How long the job was due before this claim (database clock). */
  waitedMs: number;
  /** This claim took the job over from a lease that had expired (its worker died, stalled or was cut off). */
  takenOver: boolean;
};

/**
 * Lost leases in a row (lease_lost_streak) from which a job is a suspect: a likely poison,
 * of which a worker holds at most one at a time. One loss is what a host crash does to
 * every job in hand; a second in a row points at the job itself.
 * The trade-off: after a first crash, a poison job and its innocent neighbours all stand at
 * one loss and may be taken over together, so the poison can take them down a second time
 * (then each is a suspect and runs alone). With a streak of 1 they could not, but a
 * crashed host's jobs were then taken over one per worker (recovery past its bound).
 */
export const SUSPECT_STREAK = 2;

/** A schedule's overlap policy (schedules.overlap, which takes its values from here; see ops.ScheduleInput). */
export const SCHEDULE_OVERLAPS = ['allow', 'skip'] as const;
export type ScheduleOverlap = (typeof SCHEDULE_OVERLAPS)[number];

/** The keys of an enqueue that can answer with an existing job (EnqueueResult.heldBy). */
export const ENQUEUE_KEYS = ['idempotencyKey', 'singletonKey'] as const;
export type EnqueueKey = (typeof ENQUEUE_KEYS)[number];

/** Job ids (decimal text of a bigint) in ascending order, for sort(). */
export const compareJobIds = (a: string, b: string) => {
  const [x, y] = [BigInt(a), BigInt(b)];
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * Job priorities, as Oban, River and BullMQ order them: 0 runs first and is the default, 9
 * runs last; within a level, the oldest due job first. Ten levels: each is one range of the
 * claim indexes and one Redis list per queue, both walked in level order.
 */
export const PRIORITY_LEVELS = 10;
export const DEFAULT_PRIORITY = 0;
/** Attempts of a job whose producer gave none and whose type declares none (see attemptsFor in statements/fragments.ts). */
export const DEFAULT_MAX_ATTEMPTS = 3;
/** The most attempts a job (or a job type's declaration) may ask for. */
export const MAX_ATTEMPTS_LIMIT = 100;

/**
 * Two ways to read the claim indexes (queue[, type], priority, run_at) level by level.
 *
 * levelByLevel: one query per level, `arm(level)`, joined by UNION ALL. PostgreSQL runs the
 * arms one after the other (an Append): under a LIMIT, the levels after the one that filled
 * it are never read, nor locked, and an arm that locks (FOR UPDATE SKIP LOCKED) walks past the
 * rows another claimer holds as far as it must. One range over all levels instead would read
 * past every not-yet-due job of a level (a million scheduled for tomorrow) before the next.
 * But ten arms are planned ten times: with a join in each arm (a range per type), a claim
 * took 4-6 ms to plan, 26-39 ms on a loaded machine, for each of a connection's first five
 * runs (custom plans) — the latency workload's p99, from fresh processes, went from 13 to
 * 21 ms (medians of interleaved runs).
 *
 * LEVELS_SQL: the levels as rows of `l.level`, joined LATERAL to one range per level (and
 * type), the ranges then merged by (priority, run_at, job_id): one plan for all the levels,
 * about 1 ms, but every level's range is read (each cut at the read's limit; not-yet-due jobs
 * are outside it) — up to ten times the reads of levelByLevel when every level has a backlog.
 * The claims of handled types use it (a job's path: the poll, and every claim while Redis is
 * away); reads off a job's path use levelByLevel.
 */
export const levelByLevel = (arm: (level: number) => string) =>
  Array.from({ length: PRIORITY_LEVELS }, (_, level) => `SELECT * FROM (${arm(level)}) l${level}`).join('\n   UNION ALL\n  ');

/** The priority levels as rows of `l.level` (see levelByLevel). */
export const LEVELS_SQL = `generate_series(0, ${PRIORITY_LEVELS - 1}) AS l(level)`;

/** A job id's spelling: a positive integer of at most 19 digits (isJobIdText also bounds it). */
export const JOB_ID_PATTERN = /^[1-9][0-9]{0,18}$/;
/** The largest job id: job_id is a PostgreSQL bigint. */
export const MAX_JOB_ID = 9_223_372_036_854_775_807n;
/**
 * Text that is a job id: a positive integer no larger than a bigint. Anything else never
 * reaches SQL as an id (cast to bigint there, a larger number fails the statement: a 500).
 */
// (Only a 19-digit id can pass the bigint's top: the pop judges every id it takes with this.)
export const isJobIdText = (s: string) => JOB_ID_PATTERN.test(s) && (s.length < 19 || BigInt(s) <= MAX_JOB_ID);

/**
 * The column `owner_gone` of a read from `jobs`: how a running job's worker ended, when its
 * supervisor saw it die ("killed by SIGKILL"; a stop that kept the lease says so too) — the
 * lease has no one behind it and only runs out. Null for a live owner, and for every job not
 * running. Read by the lists and the detail (read.ts) and by an action's refusal (jobCurrent).
 */
export const OWNER_GONE_SQL = `CASE WHEN status = 'running' THEN
    (SELECT coalesce(w.exit, 'stopped without handing the job back') FROM workers w WHERE w.worker_id = jobs.worker_id AND w.stopped_at IS NOT NULL)
  END AS owner_gone`;

/** SQL: the row (of `alias`, if given) is in a status that holds its singleton key (jobs_singleton_key_idx's predicate). */
export const holdsSingletonKey = (alias?: string) => `${alias ? `${alias}.` : ''}status IN ('queued', 'retrying', 'running')`;

/**
 * The unfinished job, other than `alias`'s own, that holds `alias`'s singleton key (NULL: none,
 * or no key): why a requeue or a copy of a finished job is refused, and what the job page
 * links to. One probe of jobs_singleton_key_idx.
 */
export const singletonHolderSql = (alias: string) =>
  `(SELECT h.job_id FROM jobs h WHERE h.singleton_key = ${alias}.singleton_key AND ${holdsSingletonKey('h')} AND h.job_id <> ${alias}.job_id LIMIT 1)`;

/** The longest cron expression and time zone name a schedule may have: the API's schema and a schedule's own check hold them alike. */
/**
 * Whether an expression has an H (a value drawn from the schedule's name: `H * * * *` runs
 * once an hour at a minute its name fixes). Not the H inside a day name (THU).
 */
export const cronUsesHash = (cron: string) => /(^|[^A-Za-z])H([^A-Za-z]|$)/.test(cron);

/** Schedule names are at most this long (the tick's idempotency key must fit in 255). */
export const SCHEDULE_NAME_MAX = 200;
/**
 * How the idempotency keys of a schedule's jobs begin: a tick's `schedule:<name>:<tick>`, a
 * run-now's `schedule-run:<name>:<second>` (lib/queue/ops/schedules.ts). The scheduler takes a
 * job holding a tick's key as that tick's own, so the API refuses them from anyone else: a
 * producer could otherwise replace or suppress an operator's scheduled run.
 */
export const SCHEDULE_TICK_KEY_PREFIX = 'schedule:';
export const SCHEDULE_RUN_KEY_PREFIX = 'schedule-run:';
export const isSchedulerKey = (key: string) => key.startsWith(SCHEDULE_TICK_KEY_PREFIX) || key.startsWith(SCHEDULE_RUN_KEY_PREFIX);
export const SCHEDULE_CRON_MAX = 200;
export const SCHEDULE_TIMEZONE_MAX = 64;

/**
 * Why a new queue name may not hold a comma: `worker --queues a,b` is a list, so a worker
 * could serve such a queue only by serving every queue. Said alike by the API's and the CLI's
 * schema and by a schedule's own check (a handlers module's schedules skip the schema).
 */
export const QUEUE_NAME_COMMA = "must not contain a comma (a worker's --queues list is split at commas)";

/**
 * Enabled, unpaused schedules whose due tick cannot be enqueued (their last_error is set):
 * every worker retries it; `schedule list` and the console say why.
 */
export const SCHEDULES_FAILING_SQL = `(SELECT count(*) FROM schedules WHERE enabled AND paused_at IS NULL AND last_error IS NOT NULL)::int`;

/**
 * Enabled, unpaused schedules that run one at a time (overlap 'skip') whose latest tick was
 * skipped and whose run it met is still queued, retrying or running (once that run has
 * finished, a daily schedule is not counted until its next tick). Once is what 'skip' is for; a
 * schedule that stays here has a run that is stuck behind something (a paused queue, a long
 * backoff, no worker with its handler): alert on it staying for longer than a run should take.
 */
export const SCHEDULES_SKIPPING_SQL = `(SELECT count(*) FROM schedules
  WHERE enabled AND paused_at IS NULL AND overlap = 'skip' AND last_skipped_at > coalesce(last_run_at, '-infinity')
    AND EXISTS (SELECT 1 FROM jobs j WHERE j.job_id = schedules.last_skipped_job_id AND j.status IN ('queued', 'retrying', 'running')))::int`;

/**
 * How long ago the recover sweep last ran, in ms by the database clock (NULL: never
 * recorded): the overview's "sweep stopped" warning and a job page's expired-lease badge.
 */
export const SWEPT_AGO_MS_SQL = `(SELECT extract(epoch FROM now() - swept_at)::float8 * 1000 FROM recover_sweep)`;

/** A claimed job is a suspect when it has now lost SUSPECT_STREAK leases in a row. */
export const isSuspect = (j: Pick<ClaimedJob, 'leaseLostStreak'>) => j.leaseLostStreak >= SUSPECT_STREAK;

/** Waiting, due at `now` (the database's) and with attempts left: a job claims take in their order, with a place in line (ops.jobsAhead). */
export const isDueWaiting = (j: Pick<Job, 'status' | 'runAt' | 'attemptCount' | 'maxAttempts'>, now: Date) =>
  (j.status === 'queued' || j.status === 'retrying') && j.runAt <= now && j.attemptCount < j.maxAttempts;

/** A place in line (ops.jobsAhead) is counted up to this many jobs ahead, in all. */
export const AHEAD_CAP = 10_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function toClaimedJob(r: any): ClaimedJob {
  return {
    id: String(r.job_id),
    queue: r.queue,
    type: r.type,
    status: 'running',
    payload: r.payload,
    attemptCount: r.attempt_count,
    maxAttempts: r.max_attempts,
    attemptBudget: r.attempt_budget,
    workerId: r.worker_id,
    checkpoints: r.checkpoints,
    leaseLostStreak: r.lease_lost_streak,
    priority: r.priority,
    waitedMs: Math.max(0, Number(r.waited_ms)),
    takenOver: r.taken_over === true,
  };
}

/**
 * A job as a bulk action's selection saw it (its filter resolved to ids): an action given
 * these leaves alone every job that changed since — another status, or a new attempt —
 * even when the action would be allowed on it now (statements/fragments.ts asSeen).
 */
export interface Seen {
  status: JobStatus;
  attempt: number;
}
export type SeenJobs = ReadonlyMap<string, Seen>;

/** A lease this worker holds: the job and the fencing token its writes carry. */
export interface Lease {
  jobId: string;
  attempt: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function toJob(r: any): Job {
  return {
    id: String(r.job_id),
    queue: r.queue,
    type: r.type,
    status: r.status,
    payload: r.payload,
    attemptCount: r.attempt_count,
    maxAttempts: r.max_attempts,
    attemptBudget: r.attempt_budget,
    workerId: r.worker_id,
    heartbeatAt: r.heartbeat_at,
    leaseExpiresAt: r.lease_expires_at,
    runAt: r.run_at,
    priority: r.priority,
    cancelRequestedAt: r.cancel_requested_at,
    idempotencyKey: r.idempotency_key,
    singletonKey: r.singleton_key ?? null,
    resultKey: r.result_key,
    error: r.error,
    checkpoints: r.checkpoints ?? null,
    leaseLostStreak: r.lease_lost_streak ?? 0,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export type JobDto = ReturnType<typeof toJobDto>;

export function toJobDto(j: Job) {
  return {
    id: j.id,
    queue: j.queue,
    type: j.type,
    status: j.status,
    payload: j.payload,
    attemptCount: j.attemptCount,
    maxAttempts: j.maxAttempts,
    attemptBudget: j.attemptBudget,
    workerId: j.workerId,
    heartbeatAt: iso(j.heartbeatAt),
    leaseExpiresAt: iso(j.leaseExpiresAt),
    runAt: iso(j.runAt)!,
    priority: j.priority,
    cancelRequestedAt: iso(j.cancelRequestedAt),
    idempotencyKey: j.idempotencyKey,
    singletonKey: j.singletonKey,
    resultKey: j.resultKey,
    error: j.error,
    checkpoints: j.checkpoints,
    leaseLostStreak: j.leaseLostStreak,
    createdAt: iso(j.createdAt)!,
    startedAt: iso(j.startedAt),
    finishedAt: iso(j.finishedAt),
  };
}

/**
 * A quiet request as exact text (its time, to the microsecond), of a `workers` row named
 * `row`: what the heartbeat hands a quieted process and the process reports back once it
 * claims nothing, so "quiet" on the workers page means this request was read, not an
 * earlier one read before a resume (statements/workers.ts workerHeartbeat, read.ts listWorkers).
 */
export const quietTokenSql = (row: string) => `extract(epoch FROM ${row}.quiet_at)::numeric::text`;
