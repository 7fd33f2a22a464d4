/**
 * The database schema: the single source of truth for job state.
 *
 * The schema itself enforces the state machine (see lib/queue/statements/ and the README's Architecture section):
 * a status enum, "a lease exists iff the job is running", "finished_at is set
 * iff the status is terminal", and "attempts never exceed the cap". Code that
 * tries to write an impossible row fails loudly instead of corrupting state.
 *
 * Every change here goes through `npm run db:generate -- --name=<what>` and a
 * reviewed, committed migration in drizzle/.
 */
import { sql } from 'drizzle-orm';
import { SCHEDULE_OVERLAPS } from '../queue/job';
import {
  bigint,
  boolean,
  check,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { ATTEMPT_OUTCOME_VALUES, JOB_STATUS_VALUES } from './enums';

export const jobStatus = pgEnum('job_status', JOB_STATUS_VALUES);

/** How one attempt (one claim) ended (the values and what each means: enums.ts). */
export const attemptOutcome = pgEnum('attempt_outcome', ATTEMPT_OUTCOME_VALUES);

const tz = { withTimezone: true } as const;

export const jobs = pgTable(
  'jobs',
  {
    jobId: bigint('job_id', { mode: 'bigint' }).primaryKey().generatedByDefaultAsIdentity(),
    queue: text('queue').notNull().default('default'),
    type: text('type').notNull(),
    status: jobStatus('status').notNull().default('queued'),
    payload: jsonb('payload').notNull().default({}),
    /** Claims so far. Only ever grows: it is the fencing token of the current lease. */
    attemptCount: integer('attempt_count').notNull().default(0),
    /** The claim number after which the job is not claimed again. */
    maxAttempts: integer('max_attempts').notNull().default(3),
    /** maxAttempts as given at enqueue: what an operator's "requeue with reset" grants again. */
    attemptBudget: integer('attempt_budget').notNull().default(3),
    /** The worker that holds the lease (while running) or last held it. */
    workerId: text('worker_id'),
    /** The last renewal of the current or last lease (database clock). */
    heartbeatAt: timestamp('heartbeat_at', tz),
    /** Set iff status = 'running'. */
    leaseExpiresAt: timestamp('lease_expires_at', tz),
    runAt: timestamp('run_at', tz).notNull().defaultNow(),
    /** 0 (the default) runs first, 9 last; within a level, the oldest due job first. */
    priority: smallint('priority').notNull().default(0),
    cancelRequestedAt: timestamp('cancel_requested_at', tz),
    idempotencyKey: text('idempotency_key'),
    /**
     * At most one unfinished job (queued, retrying or running) holds a singleton key
     * (jobs_singleton_key_idx): an enqueue with the key of one returns that job, and a
     * finished job whose key an unfinished one holds is not requeued. Finished, it lets the
     * key go without a write.
     */
    singletonKey: text('singleton_key'),
    resultKey: text('result_key'),
    /** The last attempt's error message; history is in job_attempts. */
    error: text('error'),
    /**
     * Progress that survives a crash: `{name: {value, attempt, at}}`, written by the
     * handler through ctx.checkpoint() (fenced like every write to a running job) and
     * handed to the next attempt, so a retry resumes instead of restarting.
     */
    checkpoints: jsonb('checkpoints'),
    /**
     * Consecutive attempts lost without a word from their worker (a crash, a stall, a
     * partition). From 2 the job is a suspect (lib/queue/job.ts SUSPECT_STREAK): it may be
     * what kills its process, so a worker holds at most one suspect at a time. A single
     * loss is what a host crash does to every job in hand; those are taken over at once.
     */
    leaseLostStreak: integer('lease_lost_streak').notNull().default(0),
    createdAt: timestamp('created_at', tz).notNull().defaultNow(),
    /** When the current (or last) attempt started. */
    startedAt: timestamp('started_at', tz),
    finishedAt: timestamp('finished_at', tz),
  },
  (t) => [
    // Claim path: due jobs of a queue by priority, oldest first. Only claimable rows are in
    // it, so it stays small however many finished jobs the table holds. A claim reads it one
    // priority level at a time (job.ts, levelByLevel).
    index('jobs_claim_idx')
      .on(t.queue, t.priority, t.runAt, t.jobId)
      .where(sql`status IN ('queued', 'retrying')`),
    // A worker's claims from PostgreSQL: due jobs of a queue of one type (of those it has
    // handlers for), oldest first, so jobs of types it lacks are never read past.
    index('jobs_claim_type_idx')
      .on(t.queue, t.type, t.priority, t.runAt, t.jobId)
      .where(sql`status IN ('queued', 'retrying')`),
    // Recover path and "jobs in hand" per worker: only running rows. It does not
    // include lease_expires_at, so a heartbeat (which changes only heartbeat_at and
    // lease_expires_at) touches no indexed column and can be a HOT update.
    index('jobs_running_idx').on(t.workerId).where(sql`status = 'running'`),
    // Keyset pagination per status, newest first — for the statuses that are rare or reached
    // off the hot path. Running and completed rows are left out, so a claim and a completion
    // add no entry here (running jobs are listed from jobs_running_idx; completed ones, the
    // bulk of the table, straight from the primary key, newest first).
    index('jobs_status_idx')
      .on(t.status, t.jobId)
      .where(sql`status NOT IN ('running', 'completed')`),
    // The dead letter in the order jobs failed, newest first: a job that fails now may have
    // been enqueued long ago (an old id), and operators look for the latest failures. Only
    // failed rows: a failure adds an entry, the hot path none.
    index('jobs_failed_idx')
      .on(t.finishedAt.desc(), t.jobId.desc())
      .where(sql`status = 'failed'`),
    // The lists' finishedSince windows: the jobs that finished in one, whatever their ids.
    // Finished rows only: a completion adds an entry, an enqueue or a claim none.
    index('jobs_finished_idx')
      .on(t.finishedAt)
      .where(sql`finished_at IS NOT NULL`),
    uniqueIndex('jobs_idempotency_key_idx')
      .on(t.idempotencyKey)
      .where(sql`idempotency_key IS NOT NULL`),
    // Partial on the unfinished statuses, so a job lets its key go by finishing: no write of
    // its own. Keyless rows (the hot path's) are not in it.
    uniqueIndex('jobs_singleton_key_idx')
      .on(t.singletonKey)
      .where(sql`singleton_key IS NOT NULL AND status IN ('queued', 'retrying', 'running')`),
    check('jobs_priority_in_range', sql`priority BETWEEN 0 AND 9`),
    check('jobs_attempts_in_range', sql`attempt_count >= 0 AND attempt_count <= max_attempts`),
    check('jobs_max_attempts_positive', sql`max_attempts >= 1 AND attempt_budget >= 1`),
    check('jobs_lease_iff_running', sql`(status = 'running') = (lease_expires_at IS NOT NULL)`),
    check(
      'jobs_running_has_owner',
      sql`status <> 'running' OR (worker_id IS NOT NULL AND heartbeat_at IS NOT NULL AND started_at IS NOT NULL AND attempt_count >= 1)`,
    ),
    check(
      'jobs_finished_iff_terminal',
      sql`(status IN ('completed', 'failed', 'cancelled')) = (finished_at IS NOT NULL)`,
    ),
    check(
      'jobs_cancel_requested_only_running_or_cancelled',
      sql`cancel_requested_at IS NULL OR status IN ('running', 'cancelled')`,
    ),
    check('jobs_queue_length', sql`length(queue) BETWEEN 1 AND 200`),
    check('jobs_type_length', sql`length(type) BETWEEN 1 AND 200`),
    check('jobs_idempotency_key_length', sql`length(idempotency_key) BETWEEN 1 AND 255`),
    check('jobs_singleton_key_length', sql`length(singleton_key) BETWEEN 1 AND 255`),
  ],
);

/**
 * One row per ended attempt, written by the statement that ends it. No foreign key to jobs:
 * rows are only written by the statements that hold the job's row lock, and jobDelete
 * deletes them with the job; the foreign key's per-row trigger cost a third of every
 * completion.
 *
 * `job_attempts`, the view operators query (one row per claim, CONTRACT.md), is these rows
 * and each running job's attempt in progress (drizzle/0026_job_attempts_view.sql).
 */
export const endedAttempts = pgTable(
  'ended_attempts',
  {
    jobId: bigint('job_id', { mode: 'bigint' }).notNull(),
    attempt: integer('attempt').notNull(),
    workerId: text('worker_id').notNull(),
    startedAt: timestamp('started_at', tz).notNull(),
    /** The attempt's last lease renewal. */
    heartbeatAt: timestamp('heartbeat_at', tz),
    finishedAt: timestamp('finished_at', tz).notNull().defaultNow(),
    outcome: attemptOutcome('outcome').notNull(),
    error: text('error'),
    errorStack: text('error_stack'),
  },
  (t) => [
    primaryKey({ name: 'ended_attempts_pkey', columns: [t.jobId, t.attempt] }),
    // The jobs a worker lost (the worker filter; drizzle/0028_lost_by_worker.sql).
    index('ended_attempts_lost_idx').on(t.workerId).where(sql`outcome = 'lease_lost'`),
    // The leases lost in a window, per job type (the overview's Job types; drizzle/0035_lost_by_time.sql).
    index('ended_attempts_lost_at_idx').on(t.finishedAt).where(sql`outcome = 'lease_lost'`),
  ],
);

/** One row per worker process incarnation. */
export const workers = pgTable(
  'workers',
  {
    /** host:pid:random — unique per host, process and start, so many hosts can share one database. */
    workerId: text('worker_id').primaryKey(),
    host: text('host').notNull(),
    pid: integer('pid').notNull(),
    queues: text('queues').array().notNull(),
    /**
     * The job types the process has handlers for: it claims no other. Null for a process of
     * a version before 0013, which claimed any type.
     */
    types: text('types').array(),
    concurrency: integer('concurrency').notNull(),
    startedAt: timestamp('started_at', tz).notNull().defaultNow(),
    heartbeatAt: timestamp('heartbeat_at', tz).notNull().defaultNow(),
    stoppedAt: timestamp('stopped_at', tz),
    /** How it ended when it did not stop by itself ("killed by SIGKILL", "exited with code 1"), set by its supervisor; null otherwise. */
    exit: text('exit'),
    /**
     * The process's cumulative counters and histograms (claims, completions, lease
     * losses, queue wait and run time), written with each heartbeat. /api/metrics sums
     * them over all incarnations, so counters survive process restarts.
     */
    metrics: jsonb('metrics').notNull().default({}),
    /** Set while an operator has quieted the process: it claims nothing new (it reads this with its heartbeat). */
    quietAt: timestamp('quiet_at', tz),
    /** Who quieted it (the audit log's actor). */
    quietBy: text('quiet_by'),
  },
  (t) => [index('workers_heartbeat_idx').on(t.heartbeatAt)],
);

/**
 * Per-queue controls, shared by every worker on every host. A queue with no row (the
 * common case) has none: its claims take the fast path. A queue with a row is paused or
 * limited, and its claims serialise on the row (SELECT … FOR UPDATE) so a global
 * concurrency limit and a rate limit hold across all processes.
 */
export const queues = pgTable(
  'queues',
  {
    name: text('name').primaryKey(),
    /** Set while paused: workers claim nothing from the queue. */
    pausedAt: timestamp('paused_at', tz),
    /** Most jobs of the queue running at once, over all workers and hosts. */
    concurrencyLimit: integer('concurrency_limit'),
    /** Most claims per rate period over all workers (a token bucket of this capacity). */
    rateLimit: integer('rate_limit'),
    ratePeriodMs: integer('rate_period_ms'),
    /** The token bucket: tokens left at rate_updated_at (database clock). */
    rateTokens: doublePrecision('rate_tokens'),
    rateUpdatedAt: timestamp('rate_updated_at', tz),
    updatedAt: timestamp('updated_at', tz).notNull().defaultNow(),
  },
  () => [
    check('queues_concurrency_limit_positive', sql`concurrency_limit IS NULL OR concurrency_limit >= 1`),
    check(
      'queues_rate_limit_complete',
      sql`(rate_limit IS NULL) = (rate_period_ms IS NULL) AND (rate_limit IS NULL OR (rate_limit >= 1 AND rate_period_ms >= 1))`,
    ),
  ],
);

/**
 * Where the retention walk goes on (one row): every process's sweep continues it, and after
 * a walk the next waits until rest_until (lib/queue/ops/prune.ts pruneFor).
 */
export const retentionWalk = pgTable(
  'retention_walk',
  {
    id: boolean('id').primaryKey().default(true),
    cursor: bigint('cursor', { mode: 'bigint' }).notNull().default(sql`0`),
    restUntil: timestamp('rest_until', tz),
  },
  () => [check('retention_walk_id_check', sql`id`)],
);

/**
 * When the recover sweep last ran, and in which worker process (one row, written under the
 * sweep's lock with the database clock): the console warns when it has stopped while workers
 * are alive (lib/queue/ops/recover.ts recoverSweep).
 */
export const recoverSweepRecord = pgTable(
  'recover_sweep',
  {
    id: boolean('id').primaryKey().default(true),
    sweptAt: timestamp('swept_at', tz),
    sweptBy: text('swept_by'),
  },
  () => [check('recover_sweep_id_check', sql`id`)],
);

/**
 * The counters of worker incarnations gone for a week, folded into one row by the recover
 * sweep (lib/queue/worker-totals.ts): every sum over the workers' counters reads it too.
 */
export const workerTotalsArchive = pgTable(
  'worker_totals_archive',
  {
    id: boolean('id').primaryKey().default(true),
    metrics: jsonb('metrics').notNull().default({}),
    /** How many incarnations were folded in. */
    workers: integer('workers').notNull().default(0),
    foldedAt: timestamp('folded_at', tz).notNull().defaultNow(),
  },
  () => [check('worker_totals_archive_id_check', sql`id`)],
);

/**
 * The workers' summed counters, one row a minute for a week (lib/queue/history.ts): the
 * overview's charts and Job types over 24 hours or 7 days. Written by the recover sweep.
 */
export const statsSamples = pgTable('stats_samples', {
  at: timestamp('at', tz).primaryKey(),
  /** The process-wide counters summed (console-stats.ts WorkerTotals). */
  counters: jsonb('counters').notNull(),
  /** Per queue and job type (type-metrics.ts TypeTotals[]). */
  byType: jsonb('by_type').notNull(),
});

/**
 * Recurring jobs: a cron expression (with seconds) per schedule. Each tick is enqueued
 * exactly once across all worker processes: the process that moves next_run_at on (a
 * compare-and-swap) inserts the job in the same transaction.
 */
export const schedules = pgTable('schedules', {
  name: text('name').primaryKey(),
  cron: text('cron').notNull(),
  timezone: text('timezone').notNull().default('UTC'),
  queue: text('queue').notNull().default('default'),
  type: text('type').notNull(),
  payload: jsonb('payload').notNull().default({}),
  maxAttempts: integer('max_attempts').notNull().default(3),
  /** The priority its ticks' jobs are enqueued at (jobs.priority; 0027); checked as jobs.priority is. */
  priority: smallint('priority').notNull().default(0),
  enabled: boolean('enabled').notNull().default(true),
  /** The next tick to enqueue (database clock). */
  nextRunAt: timestamp('next_run_at', tz).notNull(),
  lastRunAt: timestamp('last_run_at', tz),
  /** The job the last tick enqueued. */
  lastJobId: bigint('last_job_id', { mode: 'bigint' }),
  /**
   * Why the due tick could not be enqueued, and when it last failed (0011): each worker
   * retries it every SCHEDULE_TICK_MS, and the console shows it. Cleared by the tick that
   * goes through.
   */
  lastError: text('last_error'),
  lastErrorAt: timestamp('last_error_at', tz),
  /**
   * When an operator paused it (0018); null: running. Not `enabled`, which is the
   * definition's and is upserted again by every worker start: a pause must outlive a deploy.
   * No tick is enqueued while paused; a resume starts from the next tick after it.
   */
  pausedAt: timestamp('paused_at', tz),
  /**
   * 'allow': every tick enqueues a job. 'skip' (0031): its jobs hold the singleton key
   * `schedule:<name>` (ops.scheduleSingletonKey), so a tick while a run of it is unfinished
   * makes none and is skipped.
   */
  overlap: text('overlap', { enum: SCHEDULE_OVERLAPS }).notNull().default('allow'),
  /** The last tick skipped because a run was unfinished (overlap 'skip'), and that run's job. */
  lastSkippedAt: timestamp('last_skipped_at', tz),
  lastSkippedJobId: bigint('last_skipped_job_id', { mode: 'bigint' }),
  createdAt: timestamp('created_at', tz).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', tz).notNull().defaultNow(),
}, () => [check('schedules_priority_in_range', sql`priority BETWEEN 0 AND 9`), check('schedules_overlap_known', sql`overlap IN ('allow', 'skip')`)]);

/**
 * Job types beyond the built-in ones (lib/job-types.ts), registered by the worker processes
 * that run them (the handlers of their LEASEHOLD_HANDLERS module) each time one starts
 * (0012). Producers — the HTTP API, the CLI, the client — accept a type once a worker has
 * registered it, and check its payload against the JSON Schema the module declared, if any:
 * a type no worker ever ran is refused before it is written instead of failing at a worker.
 * A registration stays when its handler is removed (jobs may still wait for workers that are
 * down); the latest worker start's definition wins.
 */
export const registeredJobTypes = pgTable('job_types', {
  name: text('name').primaryKey(),
  description: text('description'),
  /** JSON Schema of the payload (from the module's zod schema); null: any JSON object. */
  payloadSchema: jsonb('payload_schema'),
  /** The module's time limit for one attempt, in ms (null: LEASEHOLD_JOB_TIMEOUT_MS). */
  timeoutMs: integer('timeout_ms'),
  /** The module's attempts for a job enqueued without maxAttempts (null: 3); 0029. */
  maxAttempts: integer('max_attempts'),
  registeredAt: timestamp('registered_at', tz).notNull().defaultNow(),
  /** When a worker last registered it (it starts again with every worker process). */
  seenAt: timestamp('seen_at', tz).notNull().defaultNow(),
}, () => [check('job_types_max_attempts_in_range', sql`max_attempts BETWEEN 1 AND 100`)]);

// ------------------------------------------------------------------ access control (0008)

/**
 * Console and API operators. The password is a scrypt hash with its own salt and cost
 * (lib/auth/passwords.ts); roles rank viewer < operator < admin.
 */
export const users = pgTable(
  'users',
  {
    userId: bigint('user_id', { mode: 'bigint' }).primaryKey().generatedByDefaultAsIdentity(),
    name: text('name').notNull().unique(),
    role: text('role').notNull(),
    passwordHash: text('password_hash').notNull(),
    createdAt: timestamp('created_at', tz).notNull().defaultNow(),
    disabledAt: timestamp('disabled_at', tz),
  },
  () => [check('users_role_known', sql`role IN ('viewer', 'operator', 'admin')`)],
);

/** Sign-in sessions: only the sha256 of the cookie's random id is stored. */
export const sessions = pgTable(
  'sessions',
  {
    sessionHash: text('session_hash').primaryKey(),
    userId: bigint('user_id', { mode: 'bigint' })
      .notNull()
      .references(() => users.userId, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', tz).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', tz).notNull(),
  },
  (t) => [index('sessions_user_idx').on(t.userId)],
);

/** API tokens for producers and scripts (`lh_…`): only their sha256 is stored; revoked_at is checked on every request. */
export const apiTokens = pgTable(
  'api_tokens',
  {
    tokenId: bigint('token_id', { mode: 'bigint' }).primaryKey().generatedByDefaultAsIdentity(),
    name: text('name').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    scope: text('scope').notNull(),
    createdBy: text('created_by').notNull(),
    /** The user whose session (or whose token, in turn) made it: disabling the user revokes it. Null from the CLI. */
    createdByUserId: bigint('created_by_user_id', { mode: 'bigint' }),
    createdAt: timestamp('created_at', tz).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', tz),
    revokedAt: timestamp('revoked_at', tz),
  },
  () => [check('api_tokens_scope_known', sql`scope IN ('enqueue', 'viewer', 'operator', 'admin')`)],
);

/** One-time links that let the first admin choose a password (printed by `npm start` while there are no users). */
export const setupTokens = pgTable('setup_tokens', {
  tokenHash: text('token_hash').primaryKey(),
  expiresAt: timestamp('expires_at', tz).notNull(),
  usedAt: timestamp('used_at', tz),
});

/**
 * What operators did: one row per action (API, console or CLI), with what it applied to,
 * how many jobs changed and were skipped, and the operator's reason. job_ids (GIN-indexed)
 * puts the entry on each job's timeline.
 */
export const auditLog = pgTable(
  'audit_log',
  {
    auditId: bigint('audit_id', { mode: 'bigint' }).primaryKey().generatedByDefaultAsIdentity(),
    at: timestamp('at', tz).notNull().defaultNow(),
    actor: text('actor').notNull(),
    actorKind: text('actor_kind').notNull(),
    action: text('action').notNull(),
    target: jsonb('target').notNull().default({}),
    jobIds: bigint('job_ids', { mode: 'bigint' }).array().notNull().default(sql`'{}'::bigint[]`),
    changed: integer('changed').notNull().default(0),
    skipped: integer('skipped').notNull().default(0),
    reason: text('reason'),
    details: jsonb('details').notNull().default({}),
    /**
     * 'started' is written before the action runs and becomes 'done' (with the counts) or
     * 'failed' after it: an action whose process died in between still has its entry.
     */
    state: text('state').notNull().default('done'),
  },
  (t) => [
    check('audit_log_actor_kind_known', sql`actor_kind IN ('user', 'token', 'cli', 'client', 'system', 'anonymous')`),
    check('audit_log_state_known', sql`state IN ('started', 'done', 'failed')`),
    index('audit_log_job_ids_idx').using('gin', t.jobIds),
    index('audit_log_actor_idx').on(t.actor, t.auditId),
    index('audit_log_action_idx').on(t.action, t.auditId),
  ],
);

// ------------------------------------------------------------------ saved views (0019)

/**
 * The console's saved views: a name, the page (/jobs or /dead-letter) and that page's query
 * string, shared by everyone who signs in (lib/views/store.ts). Names are unique per page
 * whatever their case: name_key is the name folded by the server (0020), not by lower(),
 * which under LC_CTYPE=C folds ASCII only. created_by: the user who saved it, or
 * created_by_token: the API token (both null with sign-in off); they or an admin may delete it.
 */
export const savedViews = pgTable(
  'saved_views',
  {
    viewId: bigint('view_id', { mode: 'bigint' }).primaryKey().generatedByDefaultAsIdentity(),
    name: text('name').notNull(),
    nameKey: text('name_key').notNull(),
    page: text('page').notNull(),
    query: text('query').notNull(),
    createdBy: bigint('created_by', { mode: 'bigint' }).references(() => users.userId, { onDelete: 'set null' }),
    /** The API token that saved it (0034): that token may delete it too. */
    createdByToken: bigint('created_by_token', { mode: 'bigint' }).references(() => apiTokens.tokenId, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', tz).notNull().defaultNow(),
  },
  (t) => [
    check('saved_views_page_known', sql`page IN ('jobs', 'dead-letter')`),
    uniqueIndex('saved_views_page_name_key_idx').on(t.page, t.nameKey),
  ],
);
