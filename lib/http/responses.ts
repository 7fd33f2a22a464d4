/**
 * Response shapes of the HTTP API as zod schemas: the OpenAPI document is generated from
 * them (lib/http/openapi), and the compile-time checks at the bottom tie them to the DTO
 * functions in dto.ts, so a field added to a DTO without its schema fails `tsc`, and a
 * response that drifts from its schema fails the conformance test (app/api/openapi.db.test.ts).
 */
import { z } from 'zod';
import 'zod-openapi'; // the `.meta({ id })` typings
import type { ErrorCode } from '../queue/errors';
import type { ActionOutcome } from '../queue/ops';
import { ATTEMPT_OUTCOMES, JOB_STATUSES } from '../queue/status';
import type { actionItemDto, actionReportDto, detailDto, pageDto, statsDto, workerDto } from './dto';

const dateTime = z.iso.datetime({ offset: true });
const id = z.string().regex(/^[1-9][0-9]{0,18}$/).meta({ id: 'JobId', description: 'A job id: a positive 64-bit integer, as a string.' });
const count = z.int().min(0);

export const jobStatusSchema = z.enum(JOB_STATUSES as [string, ...string[]]).meta({ id: 'JobStatus' });

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
    cancelRequestedAt: dateTime.nullable(),
    idempotencyKey: z.string().nullable(),
    resultKey: z.string().nullable(),
    error: z.string().nullable(),
    createdAt: dateTime,
    startedAt: dateTime.nullable(),
    finishedAt: dateTime.nullable(),
  })
  .meta({ id: 'Job' });

export const jobWithLeaseSchema = jobSchema
  .extend({ leaseRemainingMs: z.number().nullable().meta({ description: 'Milliseconds left on the lease (database clock); null unless running.' }) })
  .meta({ id: 'JobWithLease' });

export const jobPageSchema = z
  .object({
    jobs: z.array(jobWithLeaseSchema),
    nextCursor: id.nullable().meta({ description: 'Pass as `cursor` for the next (older) page; null on the last page.' }),
    dbNow: dateTime,
  })
  .meta({ id: 'JobPage' });

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
  .object({ job: jobWithLeaseSchema, attempts: z.array(attemptSchema), dbNow: dateTime })
  .meta({ id: 'JobDetail' });

export const enqueuedSchema = z
  .object({ id, created: z.boolean().meta({ description: 'false when an earlier job with the same idempotency key was returned.' }) })
  .meta({ id: 'Enqueued' });
export const enqueuedManySchema = z.object({ jobs: z.array(enqueuedSchema) }).meta({ id: 'EnqueuedMany' });

const ACTION_OUTCOMES = ['requeued', 'revoked', 'cancelled', 'cancel_requested', 'deleted', 'recovered', 'skipped', 'not_found'] as const satisfies readonly ActionOutcome[];

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
  'state_forbids',
  'unauthorized',
  'forbidden',
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
    resignalled: z.array(z.object({ id, queue: z.string(), type: z.string(), status: jobStatusSchema, waitedMs: z.number() })),
    queues: z.array(z.object({ queue: z.string(), signalBacklog: count.nullable(), pushed: count })),
  })
  .meta({ id: 'RecoverReport' });

const statusCounts = z.object({
  queued: count,
  running: count,
  retrying: count,
  completed: count,
  failed: count,
  cancelled: count,
});

export const statsSchema = z
  .object({
    counts: statusCounts,
    queues: z.array(z.object({ queue: z.string(), counts: statusCounts })),
    oldestQueuedAgeMs: z.number().nullable(),
    runningExpired: count,
    workersAlive: count,
    dbNow: dateTime,
  })
  .meta({ id: 'Stats' });

export const workerSchema = z
  .object({
    workerId: z.string(),
    host: z.string(),
    pid: z.int(),
    queues: z.array(z.string()),
    concurrency: z.int(),
    startedAt: dateTime,
    heartbeatAt: dateTime,
    stoppedAt: dateTime.nullable(),
    jobsInHand: count,
    heartbeatAgeMs: z.number(),
  })
  .meta({ id: 'Worker' });

export const workersSchema = z.object({ workers: z.array(workerSchema) }).meta({ id: 'Workers' });

export const healthSchema = z
  .object({
    ok: z.literal(true),
    postgres: z.literal('ok').optional(),
    redis: z.enum(['in use', 'unreachable', 'not configured']).optional(),
    signal: z.enum(['redis', 'postgres-notify']).optional(),
  })
  .meta({ id: 'Health' });

// ---------------------------------------------------------------- compile-time ties to dto.ts

type Assert<T extends U, U> = T;
export type ResponseSchemasMatchDtos = [
  Assert<ReturnType<typeof pageDto>, z.output<typeof jobPageSchema>>,
  Assert<ReturnType<typeof detailDto>, z.output<typeof jobDetailSchema>>,
  Assert<ReturnType<typeof actionItemDto>, z.output<typeof actionItemSchema>>,
  Assert<ReturnType<typeof actionReportDto>, z.output<typeof actionReportSchema>>,
  Assert<ReturnType<typeof statsDto>, z.output<typeof statsSchema>>,
  Assert<ReturnType<typeof workerDto>, z.output<typeof workerSchema>>,
];
