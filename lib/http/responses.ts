/**
 * Response shapes of the HTTP API as zod schemas: the OpenAPI document is generated from
 * them (lib/http/openapi), and the compile-time checks at the bottom tie them to the DTO
 * functions in dto.ts, so a field added to a DTO without its schema fails `tsc`, and a
 * response that drifts from its schema fails the conformance test (app/api/openapi.db.test.ts).
 */
import { z } from 'zod';
import 'zod-openapi'; // the `.meta({ id })` typings
import { AUDIT_ACTION_NAMES, AUDIT_ACTIONS } from '../audit/actions';
import { BULK_ACTIONS, type BulkReport, PREVIEW_ITEMS, REPORT_ITEMS } from '../queue/bulk';
import type { CountKind } from '../queue/console-stats';
import type { ErrorCode } from '../queue/errors';
import { AHEAD_CAP, ENQUEUE_KEYS, JOB_ID_PATTERN, PRIORITY_LEVELS, SCHEDULE_OVERLAPS } from '../queue/job';
import type { ActionOutcome, ScheduleRun } from '../queue/ops';
import { type countNewer, LIST_ERROR_MAX_CHARS, LIST_PAYLOAD_MAX_BYTES, NEWER_CAP } from '../queue/read';
import { ATTEMPT_OUTCOMES, JOB_STATUSES } from '../queue/status';
import { VIEW_PAGES } from '../views/pages';
import type {
  actionItemDto,
  actionReportDto,
  consoleInfoDto,
  deadLetterDto,
  detailDto,
  listedJobDto,
  lookupDto,
  pageDto,
  queueControlDto,
  recoverDto,
  savedViewDto,
  scheduleDto,
  statsSnapshotDto,
  historyDto,
  workerDto,
  workersDto,
} from './dto';

const dateTime = z.iso.datetime({ offset: true });
const id = z.string().regex(JOB_ID_PATTERN).meta({ id: 'JobId', description: 'A job id: a positive 64-bit integer, as a string.' });
const count = z.int().min(0);

/** One value per job status (every status present). */
const perStatus = <T extends z.ZodType>(t: T) =>
  z.object({ queued: t, running: t, retrying: t, completed: t, failed: t, cancelled: t });

export const jobStatusSchema = z.enum(JOB_STATUSES as [string, ...string[]]).meta({ id: 'JobStatus' });

export const checkpointsSchema = z
  .record(
    z.string(),
    z.object({
      value: z.unknown().meta({ description: 'The value the handler saved (any JSON value).' }),
      attempt: z.int().min(1).meta({ description: 'The attempt that saved it.' }),
      at: dateTime.meta({ description: 'When it was saved (database clock).' }),
    }),
  )
  .nullable()
  .meta({
    id: 'Checkpoints',
    description: 'Progress the handler saved by name (ctx.checkpoint), for the next attempt; null when it never saved any.',
  });

export const jobSchema = z
  .object({
    id,
    queue: z.string(),
    type: z.string(),
    status: jobStatusSchema,
    payload: z.unknown().meta({ description: 'The payload as enqueued (any JSON value).' }),
    attemptCount: count.meta({ description: 'Claims so far; the fencing token of the current lease.' }),
    maxAttempts: z.int().min(1),
    attemptBudget: z.int().min(1),
    workerId: z.string().nullable(),
    heartbeatAt: dateTime.nullable(),
    leaseExpiresAt: dateTime.nullable(),
    runAt: dateTime,
    priority: z.int().min(0).max(PRIORITY_LEVELS - 1).meta({ description: '0 runs first (the default), 9 last; within a level, the oldest due job first.' }),
    cancelRequestedAt: dateTime.nullable(),
    idempotencyKey: z.string().nullable(),
    singletonKey: z.string().nullable().meta({ description: 'At most one queued, retrying or running job holds a singleton key: an enqueue with it meanwhile returns that job.' }),
    resultKey: z.string().nullable(),
    error: z.string().nullable(),
    checkpoints: checkpointsSchema,
    leaseLostStreak: count.meta({
      description:
        'Consecutive attempts lost without a word from the worker (a crash, a stall or a partition); a completion or a reported failure resets it. ' +
        'From 2 the job is a suspect (a likely poison): a worker holds at most one suspect at a time.',
    }),
    createdAt: dateTime,
    startedAt: dateTime.nullable(),
    finishedAt: dateTime.nullable(),
  })
  .meta({ id: 'Job' });

export const jobWithLeaseSchema = jobSchema
  .extend({
    leaseRemainingMs: z.number().nullable().meta({ description: 'Milliseconds left on the lease (database clock); null unless running.' }),
    ownerGone: z.string().nullable().meta({
      description:
        'A running job whose worker process its supervisor saw end: how it ended ("killed by SIGKILL"). Nothing renews the lease; the job is recovered when it runs out. Null otherwise.',
    }),
  })
  .meta({ id: 'JobWithLease' });

/** A job as lists carry it: big columns are cut or left out (the job's own page has them). */
export const listedJobSchema = jobWithLeaseSchema
  .extend({
    payload: z.unknown().meta({
      description: `The payload as enqueued, or null when it is over ${LIST_PAYLOAD_MAX_BYTES} bytes stored (payloadOmitted): open the job for it.`,
    }),
    error: z.string().nullable().meta({ description: `The first ${LIST_ERROR_MAX_CHARS} characters of the last error (the job has all of it).` }),
    checkpoints: checkpointsSchema.meta({ description: `As the job has them, or null when they are over ${LIST_PAYLOAD_MAX_BYTES} bytes stored (the job has them all).` }),
    payloadBytes: count.meta({ description: 'The stored size of the payload (jsonb), in bytes.' }),
    payloadOmitted: z.boolean().meta({ description: 'True when the payload was too big for a list (payload is null): open the job for it.' }),
  })
  .meta({ id: 'ListedJob' });

export const jobPageSchema = z
  .object({
    jobs: z.array(listedJobSchema),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next (older) page; null on the last page. A job id, or with status=failed "<microseconds>.<job id>".' }),
    dbNow: dateTime,
    headId: id.nullable().meta({ description: 'The newest job id when the page was read (null with no jobs).' }),
    newerAfter: z
      .string()
      .nullable()
      .meta({
        description:
          'Pass as `after` to GET /api/jobs/newer for the "N new" count above this page: the newest job id; with status=failed a moment a few seconds before the read and how many failed jobs after it the read saw ("<microseconds>.0.<seen>": a job fails whatever its id, and one that failed as the page was read may commit after it; "<microseconds>.0", the moment of the read, past 10,000 seen; a seen job requeued meanwhile makes the count one fewer until the list is read again); with status=running the moment of the read ("<microseconds>.0": the jobs that started since, whatever their ids).',
      }),
    partial: z
      .object({
        scannedDownTo: id.meta({ description: 'Ids from this one up (to the cursor) were searched.' }),
        scannedIds: count.meta({ description: 'How many ids were searched.' }),
      })
      .nullable()
      .meta({
        description:
          'Set when a filter no index serves (queue, type, error, payload, fingerprint…) spent its scan budget before the page was full: ' +
          'the page holds what was found, and nextCursor continues the search below scannedDownTo.',
      }),
  })
  .meta({ id: 'JobPage' });

export const jobLookupSchema = z
  .object({ jobs: z.array(listedJobSchema).meta({ description: 'The jobs found, newest first (an id with no job is left out).' }), dbNow: dateTime })
  .meta({ id: 'JobLookup' });

export const newerCountSchema = z
  .object({
    count: count.max(NEWER_CAP).meta({ description: `Jobs matching the filters with an id above \`after\` (at most ${NEWER_CAP}).` }),
    capped: z.boolean().meta({ description: `True when more than ${NEWER_CAP} match (count is then ${NEWER_CAP}).` }),
  })
  .meta({ id: 'NewerCount' });

export const attemptSchema = z
  .object({
    attempt: z.int().min(1),
    workerId: z.string(),
    startedAt: dateTime,
    heartbeatAt: dateTime.nullable(),
    finishedAt: dateTime.nullable(),
    outcome: z.enum(ATTEMPT_OUTCOMES as [string, ...string[]]).nullable().meta({ description: 'null while the attempt runs.' }),
    error: z.string().nullable(),
    errorStack: z.string().nullable(),
  })
  .meta({ id: 'Attempt' });

export const jobDetailSchema = z
  .object({
    job: jobWithLeaseSchema,
    payloadText: z.string().nullable().meta({ description: 'The payload exactly as stored (jsonb text): big integers keep every digit. Null with payload=0.' }),
    payloadOmitted: z.literal(true).optional().meta({ description: 'Present (true) when payload=0 left the payload out.' }),
    attempts: z.array(attemptSchema),
    dbNow: dateTime,
    singletonHolder: id.optional().meta({
      description: "Present when another job, queued, retrying or running, holds this job's singleton key: a requeue or a copy of this one is refused (409) until that one has finished.",
    }),
    workers: z
      .object({
        onQueue: count,
        withHandler: count,
        anywhere: count.meta({ description: 'Live workers on any queue: each runs the recover sweep, which moves an expired lease on.' }),
        sweptAgoMs: z.number().nullable().meta({ description: 'How long ago (ms, database clock) the recover sweep last ran; null when none was recorded. As sweptAgoMs in GET /api/stats.' }),
        sweepStaleAfterMs: count.meta({
          description: 'Past this age (ms) the sweep counts as stopped while workers are alive: ten sweep intervals, a minute at the least. As in GET /api/stats.',
        }),
        queuePaused: z.boolean(),
        queueControlled: z.boolean().meta({
          description:
            "The queue is paused or limited: an expired lease of its jobs is moved on by the recover sweep (or Recover) only. On any other queue a live worker of the queue with the type's handler also takes it over with a claim (attempts left, no cancel asked).",
        }),
      })
      .optional()
      .meta({
        description:
          'For a queued, retrying or running job: the live workers serving its queue, and how many of them have a handler for its type (a worker claims no other type; none with a handler: the job waits until one starts), the live workers anywhere, and whether its queue is paused.',
      }),
    ahead: z
      .object({
        higher: count.meta({ description: 'Due jobs of its queue with a higher priority (a lower number): claims take them first.' }),
        sameLevel: count.meta({ description: 'Due jobs of its queue and priority that came due before it (or at the same moment and were enqueued first).' }),
        capped: z.boolean().meta({ description: `The count stopped at ${AHEAD_CAP} in all: at least that many are ahead (higher and sameLevel then split only those counted).` }),
      })
      .optional()
      .meta({
        description:
          "For a due queued or retrying job with attempts left: its place in the line claims take its queue in (by priority, then due time), counting the jobs of the types the queue's live workers have handlers for (any, when none is live). A worker that also serves other queues takes their higher-priority jobs first too.",
      }),
  })
  .meta({ id: 'JobDetail' });

export const enqueuedSchema = z
  .object({
    id,
    created: z.boolean().meta({ description: 'false when an existing job was returned instead: the one with the same idempotency key, else the queued, retrying or running one with the same singleton key.' }),
    heldBy: z.enum(ENQUEUE_KEYS).optional().meta({ description: 'With created false: which of the job\'s keys returned the existing job.' }),
  })
  .meta({ id: 'Enqueued' });
export const enqueuedManySchema = z.object({ jobs: z.array(enqueuedSchema) }).meta({ id: 'EnqueuedMany' });
export const copiedSchema = z
  .object({ id, created: z.literal(true), copyOf: id.meta({ description: 'The job copied.' }) })
  .meta({ id: 'Copied' });

const ACTION_OUTCOMES = ['requeued', 'revoked', 'cancelled', 'cancel_requested', 'deleted', 'recovered', 'rescheduled', 'skipped', 'not_found'] as const satisfies readonly ActionOutcome[];

export const actionItemSchema = z
  .object({
    id,
    ok: z.boolean(),
    outcome: z.enum(ACTION_OUTCOMES),
    reason: z.string().optional().meta({ description: 'Why nothing happened, when ok is false.' }),
    job: jobSchema.optional().meta({ description: 'The job after the action, or as it stands when skipped.' }),
  })
  .meta({ id: 'ActionItem' });

export const actionReportSchema = z
  .object({ changed: count, skipped: count, items: z.array(actionItemSchema) })
  .meta({ id: 'ActionReport' });

const ERROR_CODES = [
  'invalid_request',
  'payload_too_large',
  'unknown_type',
  'not_found',
  'method_not_allowed',
  'state_forbids',
  'unauthorized',
  'forbidden',
  'csrf',
  'rate_limited',
  'unavailable',
  'internal',
] as const satisfies readonly ErrorCode[];

const errorBody = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string().min(1),
  details: z.unknown().optional(),
});

export const errorSchema = z.object({ error: errorBody }).meta({ id: 'Error' });

/** 409 from a one-job action: the error and the item, with the job as it stands. */
export const actionConflictSchema = z.object({ error: errorBody, item: actionItemSchema }).meta({ id: 'ActionConflict' });

const resignalledSchema = z.object({ id, queue: z.string(), type: z.string(), status: jobStatusSchema, waitedMs: z.number() });
const signalQueueSchema = z.object({
  queue: z.string(),
  signalBacklog: count.nullable().meta({ description: "Ids waiting in the queue's Redis list; null without Redis." }),
  pushed: count,
});

export const recoverReportSchema = z
  .object({
    dryRun: z.boolean(),
    expired: z.array(
      z.object({
        id,
        queue: z.string(),
        type: z.string(),
        workerId: z.string().nullable(),
        attemptCount: count,
        maxAttempts: z.int().min(1),
        expiredMs: z.number(),
        status: jobStatusSchema.meta({ description: 'The status it moved to (or would move to, in a preview).' }),
      }),
    ),
    resignalled: z.array(resignalledSchema),
    queues: z.array(signalQueueSchema),
    moreMayChange: z.boolean().meta({
      description:
        '`expired` reached its limit, so more expired leases may be there: a preview lists at most 1,000 (a run moves up to 10,000), and a run leaves the rest to the next sweep.',
    }),
  })
  .meta({ id: 'RecoverReport' });

const BULK_OUTCOMES = [...ACTION_OUTCOMES, 'would_change', 'would_skip'] as const;

export const bulkItemSchema = z
  .object({
    id,
    ok: z.boolean().meta({ description: 'Changed (or, in a preview, would change).' }),
    outcome: z.enum(BULK_OUTCOMES).meta({ description: 'What happened; in a preview would_change or would_skip.' }),
    reason: z.string().optional().meta({ description: 'What happened or would happen, in words; for a skip, why.' }),
    status: jobStatusSchema.optional().meta({ description: 'The job status (after the action; as it stands in a preview).' }),
    queue: z.string().optional(),
    type: z.string().optional(),
    workerId: z.string().nullable().optional(),
    leaseRemainingMs: z.number().nullable().optional(),
  })
  .meta({ id: 'BulkItem' });

export const bulkReportSchema = z
  .object({
    action: z.enum(BULK_ACTIONS),
    preview: z.boolean(),
    total: count.meta({ description: 'Jobs the action covers (the ids, the jobs matching the filter, or what the sweep found).' }),
    changed: count.meta({ description: 'Changed (in a preview: would change).' }),
    skipped: count.meta({ description: 'Skipped, each with a reason (in a preview: would be skipped).' }),
    byStatus: perStatus(count.optional()).meta({ description: 'Jobs per status (as they stood, or after the action).' }),
    byOutcome: z.partialRecord(z.enum(ACTION_OUTCOMES), count).meta({ description: 'Jobs per (predicted) outcome.' }),
    reasons: z
      .array(z.object({ reason: z.string(), count }))
      .meta({ description: 'Why jobs were (or would be) skipped, most frequent first (at most 20), with one example text each.' }),
    items: z.array(bulkItemSchema).meta({ description: `Per job, skips first (at most ${PREVIEW_ITEMS} in a preview, ${REPORT_ITEMS} in a report).` }),
    itemsTruncated: z.boolean().meta({ description: 'True when items does not list every job (the counts cover all of them).' }),
    maxId: id.nullable().meta({
      description: 'With a filter: the newest job id it was resolved against. Give it back as filter.maxId to act on the set the preview saw.',
    }),
    finishedBy: z.string().nullable().meta({
      description:
        'With a filter: when it was resolved (microseconds since 1970, database clock). Give it back as filter.finishedBy with maxId: a job that finished after the preview (an older job failing into a dead-letter group) is then left out.',
    }),
    resignal: z
      .array(resignalledSchema)
      .optional()
      .meta({ description: `recover with \`all\`: due jobs whose wake-up signal was missing (re-rung); the first ${PREVIEW_ITEMS}.` }),
    resignalTotal: count.optional().meta({ description: 'recover with `all`: how many due jobs were (or would be) re-rung.' }),
    seen: z
      .record(id, z.object({ status: jobStatusSchema, attempt: z.number().int() }))
      .optional()
      .meta({
        description:
          'A preview of at most 1,000 jobs (not recover): each job as it stands. Give it back as `seen` with the ids to have the action leave alone any job that changed meanwhile.',
      }),
    resignalQueues: z.array(signalQueueSchema).optional().meta({ description: 'recover with `all`: the signal per queue.' }),
    recoverLimit: count.optional().meta({ description: 'recover with `all`: the most expired leases one run moves (the rest wait for the next sweep).' }),
    moreMayChange: z.boolean().optional().meta({
      description:
        'recover with `all`: `changed` may not be all. A preview lists a limited number of expired leases, so at least `changed` will change (up to `recoverLimit`); after a run, it stopped at `recoverLimit` and more may remain.',
    }),
  })
  .meta({ id: 'BulkReport' });

const statusCounts = perStatus(count);
const countKind = z
  .enum(['exact', 'estimate', 'atLeast', 'unknown'] as const satisfies readonly CountKind[])
  .meta({
    id: 'CountKind',
    description:
      'exact; estimate ("≈": from the table statistics, see estimates); atLeast (the capped count, with no statistics yet); unknown (a queue\'s count of a large status that the statistics do not name the queue for: the count given, 0, means nothing).',
  });
const statusKinds = perStatus(countKind);

const workerTotals = z.object({
  claimed: z.number(),
  completed: z.number(),
  failed: z.number(),
  retried: z.number(),
  cancelled: z.number(),
  leaseLost: z.number(),
  recovered: z.number(),
});

export const queueControlSchema = z
  .object({
    name: z.string(),
    paused: z.boolean(),
    pausedAt: dateTime.nullable(),
    concurrencyLimit: z.int().min(1).nullable().meta({ description: 'Most jobs running at once over every worker and host; null: none.' }),
    rateLimit: z.int().min(1).nullable().meta({ description: 'Claims per ratePeriodMs over every worker, as a token bucket of that size: up to rateLimit at once after a quiet spell, then rateLimit per ratePeriodMs; null: none.' }),
    ratePeriodMs: z.int().min(1).nullable(),
    rateTokens: z.int().nullable().meta({ description: 'Whole claims left in the rate bucket now (database clock); null without a rate limit.' }),
    running: count.meta({ description: "The queue's jobs running now, over all workers." }),
  })
  .meta({ id: 'QueueControl', description: "A queue's pause and global limits, honoured by every worker at claim time." });

export const queueControlsSchema = z.object({ queues: z.array(queueControlSchema) }).meta({ id: 'QueueControls' });
export const queueControlResultSchema = z
  .object({
    queue: z.string(),
    controls: queueControlSchema.nullable().meta({ description: 'null: nothing set any more (the fast claim path).' }),
    changed: z.boolean().meta({ description: 'false: the controls already were so (a pause of a paused queue), and nothing changed.' }),
  })
  .meta({ id: 'QueueControlResult' });

export const scheduleSchema = z
  .object({
    name: z.string(),
    cron: z.string(),
    timezone: z.string(),
    queue: z.string(),
    type: z.string(),
    payload: z.unknown(),
    maxAttempts: z.int().min(1),
    priority: z.int().min(0).max(PRIORITY_LEVELS - 1).meta({ description: 'The priority its jobs are enqueued at (0 runs first).' }),
    enabled: z.boolean(),
    nextRunAt: dateTime,
    lastRunAt: dateTime.nullable(),
    lastJobId: id.nullable(),
    lastError: z
      .string()
      .nullable()
      .meta({ description: 'Why the due tick could not be enqueued (every worker retries it); null once a tick goes through, or after the schedule is redefined.' }),
    lastErrorAt: dateTime.nullable().meta({ description: 'When the due tick last failed.' }),
    paused: z.boolean().meta({
      description:
        'Paused by an operator: no tick is enqueued until it is resumed, which starts it from the next tick after the resume (the ticks missed meanwhile are not owed). ' +
        'Kept apart from `enabled`, the definition, which a worker start upserts again: a pause outlives it. While paused, nextRunAt is the tick it stopped at.',
    }),
    pausedAt: dateTime.nullable().meta({ description: 'When it was paused; null while it runs.' }),
    overlap: z.enum(SCHEDULE_OVERLAPS).meta({
      description:
        "'allow': every tick enqueues a job. 'skip': no second run while one is unfinished: its jobs hold the singleton key `schedule:<name>`, and a tick that meets a run still queued, retrying or running is skipped (lastSkippedAt, lastSkippedJobId).",
    }),
    lastSkippedAt: dateTime.nullable().meta({ description: "The last tick skipped because a run was unfinished (overlap 'skip')." }),
    lastSkippedJobId: id.nullable().meta({ description: 'The unfinished run that tick met.' }),
  })
  .meta({ id: 'Schedule' });
export const cronTicksSchema = z
  .object({
    ticks: z.array(dateTime).meta({ description: 'The next ticks after dbNow, earliest first.' }),
    dbNow: dateTime,
  })
  .meta({ id: 'CronTicks' });
export const schedulesSchema = z.object({ schedules: z.array(scheduleSchema), dbNow: dateTime }).meta({ id: 'Schedules' });
export const scheduleChangeSchema = z
  .object({
    schedule: scheduleSchema,
    changed: z.boolean().meta({ description: 'false: it already was paused (or running), and nothing changed.' }),
  })
  .meta({ id: 'ScheduleChange' });
export const scheduleDefinedSchema = z.object({ schedule: scheduleSchema }).meta({ id: 'ScheduleDefined' });
export const scheduleRemovedSchema = z.object({ removed: z.string().meta({ description: 'The schedule removed.' }) }).meta({ id: 'ScheduleRemoved' });
export const scheduleRunSchema = z
  .object({
    schedule: z.string(),
    id,
    queue: z.string(),
    created: z.boolean().meta({
      description: 'false: a run-now of this schedule within the same or the previous second (database clock) made this job, or (overlapping) it is the run still unfinished; no second one was enqueued.',
    }),
    overlapping: z
      .literal(true)
      .optional()
      .meta({ description: "Present when the schedule skips overlapping runs (overlap 'skip') and this job, a run of it still queued, retrying or running, was returned instead of a new one." }),
  })
  .meta({ id: 'ScheduleRun' });

/** Per queue and job type, what the attempts did between two samples of the workers' totals, busiest first. */
const typeRowsSchema = z.array(
  z
    .object({
      queue: z.string(),
      type: z.string(),
      completed: count,
      retried: count.meta({ description: 'Attempts that failed with attempts left (the job retries).' }),
      failed: count.meta({ description: 'Attempts that failed for good: the job went to the dead letter.' }),
      cancelled: count,
      snoozed: count.meta({ description: 'Attempts its handler put off (SnoozeError): no failure, the attempt given back.' }),
      leaseLost: count.meta({ description: 'Attempts whose lease ran out in the window (the worker killed, stalled or cut off), read from the attempt history: losses no worker lived to report included.' }),
      runs: count.meta({ description: 'Handler runs that ended (whatever their outcome, lost leases too).' }),
      runP50Ms: z.number().nullable().meta({ description: 'Median handler run time, interpolated within the histogram bucket (as histogram_quantile); null with no run.' }),
      runP95Ms: z.number().nullable(),
      runMeanMs: z.number().nullable(),
      runsPastTop: count.meta({ description: 'Runs longer than the histogram\'s top bound (1 h): a quantile among them says only "more than" it.' }),
    })
    .meta({ id: 'JobTypeWindow' }),
);

export const statsSchema = z
  .object({
    computedAt: dateTime.meta({ description: 'The database clock when these numbers were computed (the cache is shared by every viewer).' }),
    computeMs: count.meta({ description: 'How long the computation took.' }),
    counts: statusCounts.meta({ description: 'Jobs per status: exact below estimates.countCap, else as kinds says.' }),
    kinds: statusKinds,
    total: count,
    totalKind: countKind,
    estimates: z
      .object({
        analyzedAt: dateTime.nullable().meta({ description: 'The last ANALYZE of the jobs table; null when never.' }),
        liveRows: count.nullable().meta({ description: "The table's live row count (pg_stat_user_tables)." }),
        countCap: count.meta({ description: 'Statuses with at least this many jobs are estimated.' }),
      })
      .meta({ description: 'What the estimates rest on.' }),
    queues: z.array(
      z.object({
        queue: z.string(),
        counts: statusCounts,
        kinds: statusKinds,
        due: count.meta({ description: 'Queued or retrying jobs due now (capped: see dueCapped).' }),
        dueCapped: z.boolean(),
        dueUnhandled: count.meta({
          description: 'Of the due jobs counted, those of a type no live worker on the queue has a handler for: they wait for one, no wake-up is missing for them.',
        }),
        dueSuspect: count.meta({
          description:
            'Of the due jobs counted that a live worker can run, the suspects (jobs that lost their lease twice in a row: a likely poison), which a worker takes only while it holds no other: they wait their turn, no wake-up is missing for them.',
        }),
        oldestDueAgeMs: z.number().nullable().meta({ description: 'Age of the oldest waiting job; null when none waits.' }),
        signalBacklog: count.nullable().meta({ description: "Ids waiting in the queue's Redis list; null without Redis." }),
        controls: queueControlSchema.nullable().meta({ description: 'Pause and global limits; null: none.' }),
        workersAlive: count.meta({ description: 'Worker processes alive (a heartbeat within a lease) that consume this queue.' }),
      }),
    ),
    queuesTruncated: z.boolean().meta({ description: 'More queues hold waiting jobs than are listed: queues holds the first 200 by name.' }),
    oldestQueuedAgeMs: z.number().nullable().meta({ description: "The oldest due job's age over every queue, listed or not; null when none is due." }),
    runningExpired: count.meta({ description: 'Running jobs whose lease has expired (recover moves them on).' }),
    workersAlive: count,
    workersStale: count.meta({ description: 'Workers not stopped but silent for longer than a lease (within the last day).' }),
    schedulesFailing: count.meta({ description: 'Enabled, unpaused schedules whose due tick cannot be enqueued (GET /api/schedules says why).' }),
    schedulesSkipping: count.meta({
      description: "Enabled, unpaused schedules run one at a time (overlap 'skip') whose latest tick was skipped, their previous run still unfinished (GET /api/schedules: lastSkippedAt, lastSkippedJobId).",
    }),
    sweptAgoMs: z.number().nullable().meta({
      description: "How long ago the recover sweep last ran (database clock; the snapshot's age not included); null when it never has.",
    }),
    sweepStaleAfterMs: count.meta({
      description: 'Older than this while workers are alive, the sweep has stopped (its lock held by a session that does not sweep): expired leases are not moved on.',
    }),
    signal: z.object({
      usingRedis: z.boolean(),
      redisConfigured: z.boolean().meta({ description: 'Redis is configured; with usingRedis false, it does not answer now.' }),
      due: count,
      backlog: count.nullable().meta({ description: 'Ids in Redis over all queues; null without Redis.' }),
    }),
    workerTotals: workerTotals.meta({ description: "The workers' cumulative counters, summed over the workers table." }),
    database: z
      .object({
        oldestTransaction: z
          .object({
            ageMs: count,
            pid: z.number().int(),
            state: z.string().nullable().meta({ description: "pg_stat_activity.state: 'idle in transaction' is a session that began one and went quiet." }),
            application: z.string().nullable(),
            user: z.string().nullable(),
          })
          .nullable()
          .meta({
            description:
              'The client session of this database with the oldest open transaction that holds a snapshot or a transaction id: while it lasts, vacuum cannot clear rows finished after it began. Null when none (sessions of other roles are seen only with pg_read_all_stats).',
          }),
        deadRows: count.nullable().meta({ description: "Dead rows in jobs (the statistics collector's count); null when unknown." }),
        xidAge: count.nullable().meta({ description: "Age in transaction ids of the database's oldest unfrozen one: PostgreSQL stops accepting writes near 2^31." }),
      })
      .meta({ description: 'What holds back vacuum of the jobs table, and what it costs.' }),
    dbNow: dateTime,
    throughput: z
      .object({
        bucketMs: count,
        since: dateTime.nullable().meta({ description: 'The first sample (the console process samples while it runs); null before one.' }),
        points: z.array(
          z.object({
            t: z.number().meta({ description: 'Bucket start, ms since the epoch (database clock).' }),
            claimed: z.number(),
            completed: z.number(),
            failed: z.number().meta({ description: 'Jobs dead-lettered, counted from the failed jobs themselves.' }),
            retried: z.number(),
            leaseLost: z.number().meta({ description: 'Leases workers found lost while they lived (a stall, a partition).' }),
            recovered: z.number().meta({ description: "Attempts whose lease was lost (a crashed worker's included), counted from the attempt history: those a sweep, a peer's takeover or an operator's Recover moved on." }),
          }),
        ),
      })
      .meta({ description: "Jobs per second per bucket, from the workers' counters (failed and recovered from the rows themselves)." }),
    types: z
      .object({
        windowMs: count.meta({ description: 'The longest span the rows cover.' }),
        since: dateTime.nullable().meta({ description: 'The earlier of the two samples the rows compare (within windowMs of until); null before the console process has two.' }),
        until: dateTime.nullable().meta({ description: 'The later sample (the latest).' }),
        rows: typeRowsSchema,
      })
      .meta({ description: "Per queue and job type, the attempts that ended between two samples of the workers' totals, busiest first." }),
    refreshMs: count.meta({ description: 'How long a snapshot is served before it is computed again.' }),
    refreshFailing: z.boolean().meta({
      description: 'The last refresh of the snapshot failed (the database is away): this one is served on, briefly, and is as old as computedAt says.',
    }),
  })
  .meta({ id: 'Stats' });

export const statsHistorySchema = z
  .object({
    range: z.enum(['24h', '7d']),
    rangeMs: count,
    bucketMs: count.meta({ description: 'The width of each point: 5 minutes over 24 hours, an hour over 7 days.' }),
    since: dateTime.nullable().meta({ description: 'The first sample within the range; null when the record holds none yet.' }),
    until: dateTime.nullable().meta({ description: 'The latest sample.' }),
    points: z.array(
      z.object({
        t: z.number().meta({ description: 'Bucket start, ms since the epoch (database clock).' }),
        claimed: z.number(),
        completed: z.number(),
        failed: z.number().meta({ description: "Jobs the workers moved to the dead letter (their own count)." }),
        retried: z.number(),
        recovered: z.number().meta({ description: 'Attempts whose lease was lost in the bucket, per second of it, counted from the attempt history (as the live chart counts them).' }),
      }),
    ).meta({ description: 'Jobs per second in each bucket, from one sample in it to the next (recovered: from the attempt history).' }),
    types: typeRowsSchema,
  })
  .meta({ id: 'StatsHistory', description: 'The workers\' counters over a range, from the record the recover sweep keeps (a sample a minute, a week long).' });

export const workerSchema = z
  .object({
    workerId: z.string(),
    host: z.string(),
    pid: z.int(),
    queues: z.array(z.string()),
    types: z
      .array(z.string())
      .nullable()
      .meta({ description: 'The job types it has handlers for, the only ones it claims; null for a worker of an earlier version, which claims any.' }),
    concurrency: z.int(),
    startedAt: dateTime,
    heartbeatAt: dateTime,
    stoppedAt: dateTime.nullable(),
    exit: z
      .string()
      .nullable()
      .meta({ description: 'How it ended when it did not stop by itself ("killed by SIGKILL", "exited with code 1"), as its supervisor saw; null otherwise.' }),
    jobsInHand: count,
    heartbeatAgeMs: z.number(),
    stale: z.boolean().meta({ description: 'Not stopped, but silent for longer than staleAfterMs: its leases run out and recover takes its jobs.' }),
    metrics: z.record(z.string(), z.unknown()).meta({ description: "The process's own counters, as last reported." }),
    quietAt: dateTime.nullable().meta({ description: 'When an operator quieted it (POST /api/workers/{id}/quiet): it claims no new job; null while it claims.' }),
    quietBy: z.string().nullable().meta({ description: 'Who quieted it.' }),
    quietSeen: z.boolean().meta({ description: 'The process has read this request and reported, with a later heartbeat, that it claims nothing (quiet); false before (quieting).' }),
    lostJobs: z
      .array(z.object({ id: z.string(), suspect: z.boolean().meta({ description: 'It has lost its lease twice in a row or more and is not finished (cancelled or completed): a likely poison.' }) }))
      .meta({ description: "An ended process's jobs in hand when it ended (the leases it lost after its last heartbeat, not those lost while it ran on; the first 5, suspects first, then by id): after a crash, the suspect among them is the likely poison. Empty while it runs." }),
    lostJobsTotal: count.meta({ description: 'How many jobs it had in hand when it ended, as lostJobs counts them (lostJobs lists the first 5); 0 while it runs.' }),
  })
  .meta({ id: 'Worker' });

export const workerQuietSchema = z
  .object({
    workerId: z.string(),
    quiet: z.boolean().meta({ description: 'What was asked: true to quiet, false to resume.' }),
    changed: z.boolean().meta({ description: 'false: it already was so, and nothing changed.' }),
  })
  .meta({ id: 'WorkerQuiet' });

export const workersSchema = z
  .object({
    workers: z.array(workerSchema).meta({ description: 'Live ones first (by host and start), then the silent ones, then the ended ones, the latest first; at most 500.' }),
    total: count.meta({ description: 'Every worker process on file (ended ones are kept a week): above the length of workers when the list leaves rows out (those that ended earliest first).' }),
    staleAfterMs: count.meta({ description: 'Silence after which a worker is stale (the lease length).' }),
    dbNow: dateTime,
  })
  .meta({ id: 'Workers' });

export const deadLetterSchema = z
  .object({
    groups: z.array(
      z.object({
        type: z.string(),
        fingerprint: z.string().regex(/^[0-9a-f]{12}$/).meta({ description: 'Pass as the `fingerprint` filter to list (or act on) the group.' }),
        pattern: z.string().meta({ description: "The error's first line, variable parts replaced (# for tokens with digits, ? for quoted values)." }),
        sampleError: z.string().nullable().meta({ description: "The newest job's first error line." }),
        sampleJobId: id,
        count: z.int().min(1),
        queues: z.array(z.string()).meta({ description: 'Up to 5 of its queues.' }),
        newestFailedAt: dateTime.nullable(),
        oldestFailedAt: dateTime.nullable(),
      }),
    ),
    examined: count.meta({ description: 'Failed jobs looked at (the newest ones, up to a sample).' }),
    complete: z.boolean().meta({ description: 'False when there are older failed jobs than the sample.' }),
    dbNow: dateTime,
  })
  .meta({ id: 'DeadLetter' });

export const consoleInfoSchema = z
  .object({
    environment: z.string().nullable().meta({ description: 'LEASEHOLD_ENV (the environment badge); null when unset.' }),
    leaseMs: z.int().min(1),
    heartbeatMs: z.int().min(1),
    recoverMs: z.int().min(1),
    redis: z.boolean().meta({ description: 'Whether producers ring workers through Redis (else PostgreSQL NOTIFY).' }),
    redisPrefix: z.string(),
    version: z.string(),
    jobTypes: z.array(z.string()).meta({ description: 'The job types producers may enqueue: the built-in ones and those workers registered.' }),
    logUrl: z
      .string()
      .nullable()
      .meta({ description: "LEASEHOLD_LOG_URL: the URL template of an attempt's logs ({id}, {attempt}, {worker}, {queue}, {type}, {startedAt}, {finishedAt}, {startedMs}, {finishedMs}); null when unset." }),
  })
  .meta({ id: 'ConsoleInfo' });

export const healthSchema = z
  .object({
    ok: z.literal(true),
    postgres: z.literal('ok').optional(),
    redis: z.enum(['in use', 'unreachable', 'not configured']).optional(),
    signal: z.enum(['redis', 'postgres-notify']).optional(),
  })
  .meta({ id: 'Health' });

// ---------------------------------------------------------------- compile-time ties to dto.ts

type Keys<U> = U extends object ? keyof U : never;
type Prop<U, K extends PropertyKey> = U extends object ? (K extends keyof U ? U[K] : never) : never;
type Elem<U> = U extends readonly (infer E)[] ? E : never;
/**
 * The paths of the fields `T` has that `U` does not describe ('.jobs[].checkpoints'),
 * never when it describes them all. `T extends U` alone lets a DTO carry fields its
 * schema lacks; the served schemas forbid unknown fields (additionalProperties: false).
 */
type Undescribed<T, U, P extends string = ''> = unknown extends U
  ? never
  : T extends readonly (infer E)[]
    ? Undescribed<E, Elem<U>, `${P}[]`>
    : T extends object
      ? { [K in keyof T & string]-?: K extends Keys<U> ? Undescribed<T[K], Prop<U, K>, `${P}.${K}`> : `${P}.${K}` }[keyof T & string]
      : never;
/** The DTO's type fits the schema's output, and has no field the schema does not describe. */
type Ties<T extends U, U> = Undescribed<T, U>;
type None<T extends never> = T;

export type ResponseSchemasMatchDtos = [
  None<Ties<ReturnType<typeof pageDto>, z.output<typeof jobPageSchema>>>,
  None<Ties<ReturnType<typeof listedJobDto>, z.output<typeof listedJobSchema>>>,
  None<Ties<ReturnType<typeof lookupDto>, z.output<typeof jobLookupSchema>>>,
  None<Ties<Awaited<ReturnType<typeof countNewer>>, z.output<typeof newerCountSchema>>>,
  None<Ties<ReturnType<typeof detailDto>, z.output<typeof jobDetailSchema>>>,
  None<Ties<ReturnType<typeof actionItemDto>, z.output<typeof actionItemSchema>>>,
  None<Ties<ReturnType<typeof actionReportDto>, z.output<typeof actionReportSchema>>>,
  None<Ties<BulkReport, z.output<typeof bulkReportSchema>>>,
  None<Ties<ReturnType<typeof recoverDto>, z.output<typeof recoverReportSchema>>>,
  None<Ties<ReturnType<typeof statsSnapshotDto>, z.output<typeof statsSchema>>>,
  None<Ties<ReturnType<typeof historyDto>, z.output<typeof statsHistorySchema>>>,
  None<Ties<ReturnType<typeof workerDto>, z.output<typeof workerSchema>>>,
  None<Ties<ReturnType<typeof workersDto>, z.output<typeof workersSchema>>>,
  None<Ties<ReturnType<typeof deadLetterDto>, z.output<typeof deadLetterSchema>>>,
  None<Ties<ReturnType<typeof consoleInfoDto>, z.output<typeof consoleInfoSchema>>>,
  None<Ties<ReturnType<typeof queueControlDto>, z.output<typeof queueControlSchema>>>,
  None<Ties<ReturnType<typeof scheduleDto>, z.output<typeof scheduleSchema>>>,
  None<Ties<ScheduleRun, z.output<typeof scheduleRunSchema>>>,
];

// ---------------------------------------------------------------- access control and audit

export const signedInSchema = z
  .object({ user: z.object({ name: z.string(), role: z.enum(['viewer', 'operator', 'admin']) }) })
  .meta({ id: 'SignedIn' });

export const meSchema = z
  .object({
    name: z.string(),
    kind: z.enum(['user', 'token', 'anonymous']),
    role: z.enum(['viewer', 'operator', 'admin']).nullable(),
    authOff: z.boolean().meta({ description: 'LEASEHOLD_AUTH=off: sign-in is off (local demos and tests only).' }),
  })
  .meta({ id: 'Me' });

export const okSchema = z.object({ ok: z.literal(true) }).meta({ id: 'Ok' });

export const auditEntrySchema = z
  .object({
    id: z.string(),
    at: z.string(),
    actor: z.string(),
    actorKind: z.enum(['user', 'token', 'cli', 'client', 'system', 'anonymous']),
    action: z.string().meta({ description: AUDIT_ACTION_NAMES.map((a) => `${a} (${AUDIT_ACTIONS[a]})`).join(', ') }),
    target: z.record(z.string(), z.unknown()).meta({ description: 'What it applied to: {ids}, {filter, maxId}, {all}, {queue}, {user}, {token}, {schedule}, {view, page}.' }),
    jobIds: z.array(z.string()).meta({ description: 'The jobs it touched (the first 50; details.jobCount has the count, and details.jobIdsKept, when given, how many of them the entry keeps: a job past those does not find it by jobId).' }),
    changed: z.int().min(0),
    skipped: z.int().min(0),
    reason: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    state: z.enum(['started', 'done', 'failed']).meta({
      description:
        "done: the action ran and the counts are its own; failed: it stopped with an error (details.error; what it changed before the error is not counted, details.countsUnknown); started: the entry was written before the action and its outcome never was (its process died, or the database went away), so the action may or may not have happened",
    }),
  })
  .meta({ id: 'AuditEntry' });

export const auditPageSchema = z
  .object({ entries: z.array(auditEntrySchema), nextCursor: z.string().nullable() })
  .meta({ id: 'AuditPage' });

export const userSchema = z
  .object({ name: z.string(), role: z.enum(['viewer', 'operator', 'admin']), createdAt: z.string(), disabledAt: z.string().nullable() })
  .meta({ id: 'User' });
export const usersSchema = z.object({ users: z.array(userSchema) }).meta({ id: 'Users' });
export const roleChangeSchema = userSchema
  .extend({
    previousRole: z.enum(['viewer', 'operator', 'admin']),
    revokedTokens: z.array(z.string()).meta({ description: 'The API tokens the user made whose scope is above the new role, revoked with the demotion.' }),
  })
  .meta({ id: 'RoleChange' });

export const tokenSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scope: z.enum(['enqueue', 'viewer', 'operator', 'admin']),
    createdBy: z.string().meta({ description: 'who made it, as a label: "alice (user)", a token\'s name, or user@host from the command line' }),
    owner: z.string().nullable().meta({ description: "the user whose disable or demotion revokes it (who made it, or made the token that made it); null when made from the command line" }),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'ApiToken' });
export const tokensSchema = z.object({ tokens: z.array(tokenSchema) }).meta({ id: 'ApiTokens' });
export const createdTokenSchema = tokenSchema
  .extend({ token: z.string().meta({ description: 'The secret (`lh_…`): shown in this answer only.' }) })
  .meta({ id: 'CreatedApiToken' });

// ---------------------------------------------------------------- saved views

export const savedViewSchema = z
  .object({
    id: z.string().meta({ description: 'DELETE /api/views/{id} takes it.' }),
    name: z.string(),
    page: z.enum(VIEW_PAGES),
    query: z.string().meta({ description: "The page's filters as its URL carries them: the view opens /jobs?<query> (or /dead-letter?<query>)." }),
    createdBy: z.string().nullable().meta({ description: 'The user who saved it, or the API token ("ci (API token)"; it may delete it too); null with sign-in off (then only an admin deletes it) or for a token since revoked and deleted.' }),
    createdAt: dateTime,
    deletable: z.boolean().meta({ description: 'Whether the caller may delete it: its creator (an operator or admin), or an admin.' }),
  })
  .meta({ id: 'SavedView' });
export const savedViewsSchema = z
  .object({ views: z.array(savedViewSchema).meta({ description: 'By page, then by name (case aside).' }) })
  .meta({ id: 'SavedViews' });

export type SavedViewSchemaMatchesDto = None<Ties<ReturnType<typeof savedViewDto>, z.output<typeof savedViewSchema>>>;
