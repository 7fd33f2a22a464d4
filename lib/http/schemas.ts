/**
 * Request schemas for the HTTP API (and the CLI, which validates the same way). Every
 * limit lives here: lengths, counts, ranges. A request that fails them gets a 400 naming
 * the field and writes nothing.
 */
import { z } from 'zod';
import { QueueError } from '../queue/errors';
import { NAME_RE } from '../auth/store';
import { builtinJobTypes, type KnownJobTypes } from '../job-types';
import { JOB_STATUS_VALUES } from '../db/enums';
import type { EnqueueInput, ScheduleInput } from '../queue/ops';
import { BULK_ACTIONS } from '../queue/bulk';
import { ANCHOR_SEEN_MAX, compactFilter, FAILED_POSITION, MOMENT_ANCHOR, MOMENT_LISTS, parsePayloadFilter, PIN_KEYS } from '../queue/filters';
import { FINGERPRINT_RE } from '../queue/fingerprint';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_PRIORITY, isSchedulerKey, JOB_ID_PATTERN, MAX_ATTEMPTS_LIMIT, MAX_JOB_ID, PRIORITY_LEVELS, QUEUE_NAME_COMMA, SCHEDULE_CRON_MAX, SCHEDULE_NAME_MAX, SCHEDULE_OVERLAPS, SCHEDULE_RUN_KEY_PREFIX, SCHEDULE_TICK_KEY_PREFIX, SCHEDULE_TIMEZONE_MAX, type ScheduleOverlap } from '../queue/job';
import { jsonProblem, LONE_SURROGATE, MAX_PAYLOAD_DEPTH, underflowingNumber, underflowText } from '../queue/text';
import { parseSince } from '../since';
import { hasHidden } from '../ui/visible';
import { filtersFromParams, MIN_ATTEMPTS_TEXT, PRIORITY_TEXT } from '../api/filters';
import { MAX_VIEW_NAME, MAX_VIEW_QUERY, VIEW_PAGE_FILTERS, VIEW_PAGE_PATHS, VIEW_PAGES, type ViewPage, viewQueryOf } from '../views/pages';

// Also the HTTP API's check on payloads and checkpoints (the worker imports it from text.ts, without zod).
export { jsonProblem, MAX_PAYLOAD_DEPTH };

export const MAX_PAYLOAD_BYTES = 1024 * 1024;
export const MAX_BULK_ENQUEUE = 1_000;
export { MAX_ATTEMPTS_LIMIT };
export const MAX_PAGE = 200;
/**
 * A whole number in a query parameter, written in decimal digits: a plain number coercion
 * would take "0x10", "1e1", "0b11" or " 5" too, answering a question nobody asked.
 */
const queryInt = (min: number, max: number, fallback: number, description?: string) =>
  z
    .string()
    .regex(/^[0-9]{1,15}$/, 'must be a whole number written in digits')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .default(fallback)
    // Documented as the integer it is (the text check above would render as a string pattern).
    .meta({
      ...(description ? { description } : {}),
      override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
        for (const k of Object.keys(jsonSchema)) delete jsonSchema[k];
        Object.assign(jsonSchema, { type: 'integer', minimum: min, maximum: max, default: fallback }, description ? { description } : {});
      },
    });
export const MAX_BULK_IDS = 1_000;

/** Text PostgreSQL can store as-is: no NUL, no lone UTF-16 surrogate. */
export const safeText = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters')
    .refine((s) => !LONE_SURROGATE.test(s), 'must be valid Unicode (no lone surrogates)');

export const queueName = safeText(1, 200);
/** Why an operator acted, kept in the audit log: the API and the CLI take the same. */
export const reasonText = safeText(0, 500);
export const typeName = safeText(1, 200);
/**
 * A queue whose controls are set: no space around it, where it would hide (" mail " lists as
 * "mail", and a filter typed as "mail" never finds it) — and a pause of " mail", a queue no job
 * can be in, would leave "mail" running.
 */
export const controlledQueueName = queueName
  .refine((s) => s.trim() === s, 'must not start or end with whitespace')
  // A URL path cannot carry them (/api/queues/.. is /api/): such a queue could not be paused.
  .refine((s) => s !== '.' && s !== '..', 'must not be "." or ".." (a URL path cannot name them)');
/**
 * The queue a new job (or a schedule's jobs) goes to: as a controlled one, and no comma —
 * `worker --queues a,b` is a list, so a worker could serve such a queue only by serving all.
 * (A queue made with one before stays controllable: controlledQueueName takes it.)
 */
export const newQueueName = controlledQueueName.refine((s) => !s.includes(','), QUEUE_NAME_COMMA);

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|([+-])(\d{2}):?(\d{2}))$/;

/**
 * An ISO 8601 date-time with a zone that names a real moment. Date.parse alone is not
 * enough: it rolls an impossible day or hour over (2026-02-30 becomes March 2, 24:00 the
 * next day), so the wall-clock fields, at the offset written, must come back as written.
 */
function isIsoDateTime(s: string): boolean {
  const m = ISO_DATE_TIME.exec(s);
  const t = m ? Date.parse(s) : NaN;
  if (!m || Number.isNaN(t)) return false;
  const offsetMinutes = m[7] ? (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9])) : 0;
  const wall = new Date(t + offsetMinutes * 60_000);
  return (
    wall.getUTCFullYear() === Number(m[1]) &&
    wall.getUTCMonth() + 1 === Number(m[2]) &&
    wall.getUTCDate() === Number(m[3]) &&
    wall.getUTCHours() === Number(m[4]) &&
    wall.getUTCMinutes() === Number(m[5]) &&
    wall.getUTCSeconds() === Number(m[6] ?? 0)
  );
}

const isoDate = z
  .string()
  .max(64)
  .refine(isIsoDateTime, {
    message: 'must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00Z',
  })
  .transform((s) => new Date(s))
  .refine((d) => d.getUTCFullYear() >= 1970 && d.getUTCFullYear() <= 9999, 'must be between 1970 and 9999');

/** What a priority is, as an error and the API's documentation say it. */
const PRIORITY_RULE = `an integer from 0 (runs first) to ${PRIORITY_LEVELS - 1} (runs last)`;
const priority = z.number().int().min(0, `must be ${PRIORITY_RULE}`).max(PRIORITY_LEVELS - 1, `must be ${PRIORITY_RULE}`);

export const enqueueBody = z
  .object({
    queue: newQueueName.optional(),
    type: typeName,
    payload: z.unknown().optional(),
    maxAttempts: z
      .number()
      .int()
      .min(1)
      .max(MAX_ATTEMPTS_LIMIT)
      .optional()
      .meta({ description: `Attempts before the dead letter; default: the job type's (its handlers module's maxAttempts), else ${DEFAULT_MAX_ATTEMPTS}.` }),
    runAt: isoDate.optional().nullable(),
    idempotencyKey: safeText(1, 255)
      .refine((k) => !isSchedulerKey(k), `keys beginning "${SCHEDULE_TICK_KEY_PREFIX}" or "${SCHEDULE_RUN_KEY_PREFIX}" are the scheduler's own (its ticks' and run-nows' jobs)`)
      .optional()
      .nullable(),
    singletonKey: safeText(1, 255)
      .optional()
      .nullable()
      .meta({
        description:
          'One job at a time per key: while a job with this key is queued, retrying or running, an enqueue with it returns that job (`created: false`) and inserts nothing. A finished job lets the key go.',
      }),
    priority: priority.optional().meta({ description: `${PRIORITY_RULE}; default ${DEFAULT_PRIORITY}. Within a level, the oldest due job runs first.` }),
  })
  .strict();

export type EnqueueBody = z.input<typeof enqueueBody>;

const enqueueMany = z
  .array(enqueueBody)
  .min(1, 'an empty array enqueues nothing: send at least one job')
  .max(MAX_BULK_ENQUEUE, `at most ${MAX_BULK_ENQUEUE} jobs in one request`);

/** POST /api/jobs's body, as documented (OpenAPI): one job, or an array of them. */
export const enqueueRequest = z.union([enqueueBody, enqueueMany]);

/**
 * Parses POST /api/jobs's body by its shape, so an error names what is wrong ("type: …",
 * "[3].maxAttempts: …") — parsed as the union, zod reports only that neither branch matched.
 */
export function parseEnqueueRequest(body: unknown): z.output<typeof enqueueRequest> {
  if (Array.isArray(body)) return enqueueMany.parse(body);
  if (body === null || typeof body !== 'object') {
    throw new QueueError('invalid_request', 'body: must be a job ({"type", "payload", …}) or an array of jobs');
  }
  return enqueueBody.parse(body);
}

/**
 * Validates one job: the envelope, then the type's own payload schema. `types`: the types
 * accepted (knownJobTypes: the built-in ones and those workers registered).
 */
export function toEnqueueInput(body: z.output<typeof enqueueBody>, where = '', types: KnownJobTypes = builtinJobTypes): EnqueueInput {
  const at = (f: string) => (where ? `${where}.${f}` : f);
  const schema = types.payloadOf(body.type);
  if (!schema) {
    throw new QueueError(
      'unknown_type',
      `${at('type')}: unknown job type ${JSON.stringify(body.type)}; known: ${types.names().join(', ')} ` +
        '(a type is known once a worker whose LEASEHOLD_HANDLERS module runs it has started)',
    );
  }
  const payload = body.payload ?? {};
  // The depth first: JSON.stringify of a value nested thousands deep overflows the stack.
  const problem = jsonProblem(payload, { parsed: true });
  if (problem) throw new QueueError('invalid_request', `${at('payload')}: ${problem}`);
  const size = Buffer.byteLength(JSON.stringify(payload) ?? '');
  if (size > MAX_PAYLOAD_BYTES) {
    throw new QueueError('payload_too_large', `${at('payload')}: ${size} bytes, over the limit of ${MAX_PAYLOAD_BYTES} (1 MiB)`);
  }
  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new QueueError('invalid_request', `${at('payload')}${i.path.length ? '.' + i.path.join('.') : ''}: ${i.message} (for ${body.type})`);
  }
  return {
    type: body.type,
    queue: body.queue,
    payload,
    maxAttempts: body.maxAttempts,
    runAt: body.runAt ?? null,
    idempotencyKey: body.idempotencyKey ?? null,
    singletonKey: body.singletonKey ?? null,
    priority: body.priority ?? DEFAULT_PRIORITY,
  };
}

/** A job id: a positive integer no larger than a bigint (a larger one would reach SQL and fail there, as a 500). */
export const jobId = z
  .string()
  .regex(JOB_ID_PATTERN, 'must be a job id (a positive integer)')
  .refine((s) => !/^[0-9]+$/.test(s) || BigInt(s) <= MAX_JOB_ID, `must be a job id (at most ${MAX_JOB_ID})`);

/** A place in the failed or running list (FAILED_POSITION): their cursors. */
const failedPosition = z
  .string()
  .regex(FAILED_POSITION, 'must be a job id, or a place in the failed or running list (<microseconds>.<job id>)')
  .refine((s) => !FAILED_POSITION.test(s) || BigInt(s.split('.')[1]!) <= MAX_JOB_ID, 'the job id in it is too large');
/** A job id, or (status=failed or running) a place in that list. */
const listPosition = z
  .string()
  .refine(
    (s) => jobId.safeParse(s).success || failedPosition.safeParse(s).success,
    'must be a job id, or (with status=failed or running) a place in that list (<microseconds>.<job id>)',
  );
/** What "N new" counts above (a page's newerAfter): a job id, or the failed or running list's MOMENT_ANCHOR. */
const newerAnchor = z
  .string()
  .refine(
    (s) =>
      jobId.safeParse(s).success ||
      (MOMENT_ANCHOR.test(s) && BigInt(s.split('.')[1]!) <= MAX_JOB_ID && Number(s.split('.')[2] ?? 0) <= ANCHOR_SEEN_MAX),
    `must be a job id, or (with status=failed or running) a page's newerAfter (<microseconds>.<job id>.<seen>, seen at most ${ANCHOR_SEEN_MAX})`,
  );
/** A place in the failed or running list is refused (400) with any other list. (The path names the field: zodMessage puts it in front.) */
const placeOnly = { message: 'a place in the failed or running list (<microseconds>.<job id>) goes with status=failed or status=running', path: ['cursor'] };
/** A moment anchor counts the jobs that failed or started since: it goes with those lists only. */
const momentOnly = { message: 'a moment (<microseconds>.<job id>) goes with status=failed or status=running', path: ['after'] };
const momentList = (status: string | undefined) => status !== undefined && status in MOMENT_LISTS;

/** The job filters (lib/queue/filters.ts), as query parameters or inside an action's body. */
const sinceText = z
  .string()
  .max(40)
  .refine((s) => parseSince(s) !== null, 'must be a span back from now (15m, 1h, 24h, 7d) or a moment (ISO 8601 with its offset, e.g. 2026-12-03T13:00:00Z)');

export const filterFields = {
  status: z.enum(JOB_STATUS_VALUES).optional(),
  queue: queueName.optional(),
  type: typeName.optional(),
  id: jobId.optional().meta({ description: 'One job.' }),
  worker: safeText(1, 300).optional().meta({ description: 'The worker id that holds (or last held) the job.' }),
  error: safeText(1, 200).optional().meta({ description: 'Text in the last error (case-insensitive substring).' }),
  payload: safeText(1, 200)
    .refine((s) => parsePayloadFilter(s) !== null, 'must be `key`, `key=value` or `a.b.c=value` (letters, digits, _ - $; up to 8 levels)')
    // The value is JSON-decoded (`a="\u0000"`, `a=1e400`): what it decodes to must be storable
    // in jsonb too, and be what was sent; the message says which rule it breaks.
    .superRefine((s, ctx) => {
      const pf = parsePayloadFilter(s);
      if (!pf || !('value' in pf)) return;
      // 1e-400 decodes to 0: a filter (and an action by it) on the jobs whose value is 0.
      const tiny = underflowingNumber(s.slice(s.indexOf('=') + 1).trim());
      const problem = tiny ? underflowText(tiny) : jsonProblem(pf.value);
      if (problem) ctx.addIssue({ code: 'custom', message: `the value ${problem}` });
    })
    .optional()
    .meta({
      description:
        'A payload key path (`a.b`: the key exists) or `a.b=value` (the value, as a JSON scalar when it parses as one, else a string); up to 8 levels.',
      example: 'order.id=ord_7',
    }),
  fingerprint: z
    .string()
    .regex(FINGERPRINT_RE, 'must be an error fingerprint (12 hex digits)')
    .optional()
    .meta({ description: "An error fingerprint (the dead letter's groups): failed jobs whose last error has this shape." }),
  minAttempts: z
    .string()
    .regex(MIN_ATTEMPTS_TEXT, 'must be a number of attempts, 1-100')
    .optional()
    .meta({ description: 'Jobs claimed at least this many times (`2`: every job that needed more than one try).', example: '2' }),
  priority: z
    .string()
    .regex(PRIORITY_TEXT, `must be a priority, 0-${PRIORITY_LEVELS - 1}`)
    .optional()
    .meta({ description: 'Jobs of this priority (0 runs first).', example: '0' }),
  due: z
    .enum(['now', 'later'])
    .optional()
    .meta({ description: 'Waiting (queued or retrying) jobs by when they are due: `now`, or `later` (scheduled for later, or a retry in its backoff).' }),
  createdSince: sinceText.optional().meta({
    description: 'Jobs enqueued since: a span back from now on the database clock (`15m`, `1h`, `24h`, `7d`; up to 9999 of m, h or d), or a moment (ISO 8601 with its offset).',
    example: '1h',
  }),
  finishedSince: sinceText.optional().meta({ description: 'Jobs finished (completed, failed or cancelled) since: as createdSince.', example: '24h' }),
  q: safeText(1, 200).optional().meta({ description: 'Free search: a job id, or text in the last error.' }),
  maxId: jobId.optional().meta({ description: 'Only jobs with an id at most this.' }),
  finishedBy: z
    .string()
    .regex(/^\d{1,17}$/, 'must be microseconds since 1970 (a preview\'s finishedBy)')
    .optional()
    .meta({ description: 'Only jobs not finished after this moment (microseconds since 1970, the database clock): give back a preview\'s finishedBy with its maxId.' }),
};

export const listQuery = z
  .object({
    ...filterFields,
    cursor: listPosition
      .optional()
      .meta({ description: 'The nextCursor of the previous page: jobs with a smaller id (with status=failed: jobs that failed earlier; with status=running: jobs that started earlier; "<microseconds>.<job id>").' }),
    limit: queryInt(1, MAX_PAGE, 50),
    fresh: z
      .literal('1')
      .optional()
      .meta({
        description:
          'Read the page now rather than answer from the read every viewer of this console shares for a second (the console asks for it when it shows the new jobs a count announced).',
      }),
  })
  .strict()
  .refine((q) => !q.cursor || !FAILED_POSITION.test(q.cursor) || momentList(q.status), placeOnly);

/** Most jobs one export writes (GET /api/jobs/export?max=), and its default. */
export const EXPORT_MAX = 100_000;
export const EXPORT_DEFAULT = 10_000;

/** GET /api/jobs/export — the list's filters, a format and how many jobs at most. */
export const exportQuery = z
  .object({
    ...filterFields,
    format: z.enum(['csv', 'ndjson']).default('csv').meta({ description: 'csv (a header row, then one row per job) or ndjson (one job per line, as the list carries it, then a summary line).' }),
    max: queryInt(1, EXPORT_MAX, EXPORT_DEFAULT).meta({ description: 'Jobs at most; past it the export ends saying it was cut.' }),
  })
  .strict();

export const jobFilter = z.object(filterFields).strict();

export const newerQuery = z
  .object({
    ...filterFields,
    after: newerAnchor.meta({
      description: "The page's newerAfter: count the jobs with a larger id than this one (with status=failed or running: the jobs that failed, or started, after this moment and were not in the page's read, \"<microseconds>.<job id>.<seen>\").",
    }),
  })
  .strict()
  .refine((q) => !MOMENT_ANCHOR.test(q.after) || momentList(q.status), momentOnly);

/** GET /api/jobs/:id — payload=0 leaves the payload out. */
export const jobDetailQuery = z
  .object({ payload: z.enum(['0', '1']).optional().meta({ description: '0: leave the payload out (job.payload and payloadText null, payloadOmitted true).' }) })
  .strict();

/** GET /api/stats/history: which range of the record. */
export const historyQuery = z
  .object({ range: z.enum(['24h', '7d'], { error: 'must be 24h or 7d' }) })
  .strict();

/** ?ids=1,2,3 — at most MAX_PAGE ids. */
export const lookupQuery = z
  .object({
    ids: z
      .string()
      .max(MAX_PAGE * 20)
      .transform((s) => s.split(',').filter(Boolean))
      .pipe(z.array(jobId).max(MAX_PAGE, `at most ${MAX_PAGE} ids`))
      .meta({ description: `Job ids, comma-separated, at most ${MAX_PAGE}.`, example: '12,15,16' }),
  })
  .strict();

/**
 * GET /api/live — what a console page watches: `stats`, the rows `ids` (as lookup), the
 * count of jobs newer than `after` that match the filters (as newer), a `job` with its
 * audit entries, and/or the `workers`.
 */
export const LIVE_EVERY_MIN_MS = 1_000;
/** A stream ends after this long and the page opens another: the gate sees every viewer again. */
export const LIVE_MAX_MS = 60_000;
/** Sent first: how long the browser waits before reconnecting a stream that broke. */
export const LIVE_RETRY_MS = 2_000;
/**
 * Streams one console process serves at most. Each reads through the shared caches, but
 * streams watching different rows read separately: past this many, a page is told to
 * poll (503), which costs the same reads but cannot hold connections open.
 */
export const MAX_LIVE_STREAMS = 200;
/**
 * Streams one signed-in user or API token holds at most on a console process (a browser
 * opens three at most, lib/api/live.ts: this is four browsers' worth), so that one account
 * cannot take every stream from the others. With sign-in off everyone is the same viewer,
 * and only MAX_LIVE_STREAMS applies.
 */
export const MAX_LIVE_STREAMS_PER_VIEWER = 12;
/**
 * Exports (GET /api/jobs/export) one viewer (a user, a token) runs at once. Each reads page
 * after page, for up to a minute, from the read pool every page of the console shares: a
 * script that started twenty with a filter no index serves would hold the pool.
 */
export const MAX_EXPORTS_PER_VIEWER = 2;
export const liveQuery = z
  .object({
    ...filterFields,
    stats: z.enum(['1']).optional().meta({ description: 'Send the overview numbers (event `stats`, the body of GET /api/stats).' }),
    ids: lookupQuery.shape.ids.optional().meta({ description: 'Send these jobs\' rows (event `lookup`, the body of GET /api/jobs/lookup).' }),
    after: newerAnchor
      .optional()
      .meta({ description: 'Send the count of jobs matching the filters newer than this (a page\'s newerAfter; event `newer`, the body of GET /api/jobs/newer).' }),
    job: jobId
      .optional()
      .meta({ description: 'Send this job with its attempts (event `job`, the body of GET /api/jobs/{id}) and the operator actions that touched it (event `audit`, the body of GET /api/audit?jobId=).' }),
    workers: z.enum(['1']).optional().meta({ description: 'Send the worker processes (event `workers`, the body of GET /api/workers).' }),
    every: queryInt(LIVE_EVERY_MIN_MS, 60_000, 2_000, 'Milliseconds between events.'),
  })
  .strict()
  .refine((q) => q.stats || q.ids?.length || q.after || q.job || q.workers, { message: 'watch something: stats=1, ids, after, job or workers=1', path: ['query'] })
  .refine((q) => q.after || Object.keys(q).every((k) => !(k in filterFields)), { message: 'filters go with after', path: ['query'] })
  .refine((q) => !q.after || !MOMENT_ANCHOR.test(q.after) || momentList(q.status), momentOnly);

export const actionName = z.enum(BULK_ACTIONS);

/**
 * POST /api/actions/:action — exactly one target: `ids` (a selection, up to MAX_BULK_IDS),
 * `filter` (every job matching it, up to BULK_CAP), or `all` (recover only: the whole sweep).
 */
export const actionBody = z
  .object({
    ids: z.array(jobId).min(1).max(MAX_BULK_IDS).optional().meta({ description: 'Target: these jobs.' }),
    filter: jobFilter.optional().meta({ description: 'Target: every job matching this filter (give at least one condition besides maxId).' }),
    all: z.literal(true).optional().meta({ description: 'Target (recover only): the whole sweep.' }),
    preview: z.boolean().optional().meta({ description: 'Only say what would happen; write nothing.' }),
    resetAttempts: z.boolean().optional().meta({ description: 'requeue: give the jobs a fresh attempt budget.' }),
    revokeLease: z.boolean().optional().meta({ description: 'requeue: also take back running jobs, revoking their live leases.' }),
    seen: z
      .record(jobId, z.object({ status: z.enum(JOB_STATUS_VALUES), attempt: z.number().int().min(0) }).strict())
      .refine((o) => Object.keys(o).length <= MAX_BULK_IDS, `at most ${MAX_BULK_IDS} jobs`)
      .optional()
      .meta({
        description:
          'With ids: each job as your preview showed it ({"42": {"status": "failed", "attempt": 2}}: the preview\'s `seen`). A job that changed since (another status or attempt) is skipped as changed, even when the action would apply to it now; a job not named here is acted on as it stands.',
      }),
    /** recover with `all`: the ids its preview listed, so each one not moved is reported with why. */
    expectIds: z
      .array(jobId)
      .max(MAX_BULK_IDS)
      .optional()
      .meta({ description: 'recover with `all`: the ids its preview listed; each one the sweep did not move is reported as skipped, with why.' }),
    reason: reasonText.optional(),
  })
  .strict()
  .refine((b) => [b.ids, b.filter, b.all].filter((x) => x !== undefined).length === 1, {
    message: 'give exactly one of `ids`, `filter` or `all`',
  })
  .refine((b) => !b.seen || b.ids, { message: 'goes with ids (a filter is resolved, and pinned, on the server)', path: ['seen'] })
  // Refused here, before anything is written (resolveFilter checks it again for the CLI).
  // No "filter: " in the message: the path puts it there (zodMessage, the CLI's issueText).
  .refine((b) => !b.filter || Object.keys(compactFilter(b.filter)).some((k) => !PIN_KEYS.includes(k)), {
    message: 'give at least one condition (an action on every job in the table is never implied)',
    path: ['filter'],
  })
  .meta({ description: 'Exactly one of `ids`, `filter` or `all`.' });

export const requeueBody = z
  .object({
    resetAttempts: z.boolean().optional(),
    revokeLease: z.boolean().optional(),
    reason: reasonText.optional(),
  })
  .strict();

/**
 * The body of an action that takes nothing but the operator's reason, for the audit log (a
 * job's cancel, a schedule's run/pause/resume, a worker's quiet/resume, a user's disable, a
 * token's revoke, a saved view's delete). Absent, or {} : no reason.
 */
export const reasonBody = z.object({ reason: reasonText.optional() }).strict();
/** POST /api/auth/signout: nothing to say (absent, or {}). */
export const emptyBody = z.object({}).strict();

/** POST /api/jobs/:id/reschedule: a waiting job's new due time and/or priority (at least one), and why. */
export const rescheduleBody = z
  .object({
    runAt: isoDate.optional().meta({ description: 'When it is due (a time already past: now). Left out: kept.' }),
    priority: priority.optional().meta({ description: `${PRIORITY_RULE}. Left out: kept.` }),
    reason: reasonText.optional(),
  })
  .strict()
  .refine((b) => b.runAt !== undefined || b.priority !== undefined, { message: 'give runAt, priority or both: there is nothing to change' });

/**
 * POST /api/jobs/:id/copy: what the copy changes of the original (each field as POST
 * /api/jobs takes it; left out: the original's payload, queue and enqueued attempts, due now),
 * and the operator's reason.
 */
export const copyBody = z
  .object({
    payload: z.unknown().optional(),
    queue: newQueueName.optional(),
    maxAttempts: z.number().int().min(1).max(MAX_ATTEMPTS_LIMIT).optional(),
    priority: priority.optional().meta({ description: "Default: the original's." }),
    runAt: isoDate.optional().nullable(),
    reason: reasonText.optional(),
  })
  .strict();
/**
 * A schedule named in a path (/api/schedules/:name/run|pause|resume). Up to 1,000 characters,
 * not the 200 a definition is held to: a schedule made by hand with a longer name, whose ticks
 * fail, is one an operator most needs to pause.
 */
export const scheduleName = safeText(1, 1_000);
/**
 * PUT /api/schedules/:name: a recurring job's definition, as `leasehold schedule add` takes it
 * (its type and payload checked as an enqueue's; the cron and the zone by the schedule
 * itself), and the operator's reason. A paused schedule stays paused.
 */
export const scheduleBody = enqueueBody
  .pick({ type: true, payload: true, queue: true, maxAttempts: true, priority: true })
  .extend({
    cron: safeText(1, SCHEDULE_CRON_MAX).meta({ description: 'Five fields, or six with seconds first ("* * * * * *" = every second).' }),
    timezone: safeText(1, SCHEDULE_TIMEZONE_MAX).optional().meta({ description: 'The IANA time zone of the cron expression; default UTC.' }),
    overlap: z
      .enum(SCHEDULE_OVERLAPS)
      .optional()
      .meta({
        description:
          "'allow' (the default for a new schedule): every tick enqueues a job. 'skip': no second run while one is unfinished; a tick that meets a run still queued, retrying or running is skipped, and a Run now returns that run. Left out of a redefinition: kept.",
      }),
    reason: reasonText.optional(),
  })
  .strict();

/** GET /api/cron: the next ticks of a cron expression in a zone, as a schedule would run it (the console's schedule dialog shows them as you type). */
export const cronTicksQuery = z
  .object({
    cron: safeText(1, SCHEDULE_CRON_MAX).meta({ description: 'Five fields, or six with seconds first.' }),
    timezone: safeText(1, SCHEDULE_TIMEZONE_MAX).default('UTC').meta({ description: 'The IANA time zone of the expression; default UTC.' }),
    name: safeText(1, SCHEDULE_NAME_MAX).optional().meta({ description: "The schedule's name: it fixes what an H in the expression stands for (an expression with H needs it)." }),
    count: queryInt(1, 10, 5, 'How many ticks.'),
  })
  .strict();

/** A schedule's definition: its cron, zone and overlap policy, and its job as an enqueue checks it (toEnqueueInput). */
export const toScheduleInput = (name: string, cron: string, timezone: string | undefined, job: EnqueueInput, overlap?: ScheduleOverlap): ScheduleInput => ({
  name,
  cron,
  timezone,
  overlap,
  type: job.type,
  queue: job.queue,
  payload: job.payload,
  maxAttempts: job.maxAttempts,
  priority: job.priority,
});


/** A worker process's id (host:pid:suffix) in a path. */
export const workerIdParam = safeText(1, 300);

export const recoverBody = z
  .object({
    dryRun: z.boolean().optional(),
    ids: z.array(jobId).min(1).max(MAX_BULK_IDS).optional(),
    reason: reasonText.optional(),
  })
  .strict();

export const queueControlsBody = z
  .object({
    paused: z.boolean().optional(),
    /** 0 clears the limit. */
    concurrencyLimit: z.number().int().min(0).max(100_000).optional(),
    /** 0 clears the limit; otherwise ratePeriodMs is required. */
    rateLimit: z.number().int().min(0).max(1_000_000).optional(),
    ratePeriodMs: z.number().int().min(1).max(86_400_000).optional(),
    reason: reasonText.optional(),
  })
  .strict()
  .refine((b) => b.paused !== undefined || b.concurrencyLimit !== undefined || b.rateLimit !== undefined, {
    message: 'give paused, concurrencyLimit and/or rateLimit',
  })
  .refine((b) => !b.rateLimit || b.ratePeriodMs !== undefined, { message: 'a rateLimit needs its ratePeriodMs', path: ['ratePeriodMs'] })
  // Alone it would be accepted and ignored (the period of which rate?).
  .refine((b) => b.ratePeriodMs === undefined || b.rateLimit !== undefined, { message: 'ratePeriodMs goes with a rateLimit', path: ['ratePeriodMs'] });

// ------------------------------------------------------------------ access control and audit

export const signInBody = z
  .object({
    name: safeText(1, 64),
    password: safeText(1, 200),
  })
  .strict();

export const setupBody = z
  .object({
    token: z.string().min(10).max(100).regex(/^[A-Za-z0-9_-]+$/, 'must be the token from the setup link'),
    name: safeText(1, 64),
    password: safeText(10, 200),
  })
  .strict();

export const auditQuery = z
  .object({
    actor: safeText(1, 64).optional().meta({ description: 'Who: the start of the actor\'s name, in any case (`root` finds `root@vm`).' }),
    action: safeText(1, 64).optional(),
    jobId: jobId.optional().meta({ description: 'Entries that touched this job.' }),
    cursor: z
      .string()
      .regex(/^[1-9][0-9]{0,17}$/, 'must be the nextCursor of the previous page')
      .optional(),
    limit: queryInt(1, MAX_PAGE, 50),
  })
  .strict();

/** A sign-in or token name, checked here so that a bad one is refused before anything is written. */
const accountName = safeText(1, 64).regex(NAME_RE, 'name: 1-64 letters, digits, _ . @ - (starting with a letter or digit)');

export const userBody = z
  .object({
    name: accountName,
    role: z.enum(['viewer', 'operator', 'admin']),
    password: safeText(10, 200),
  })
  .strict();

export const tokenBody = z
  .object({
    // All digits would read as a token id (`token revoke 3`): tokenCreate refuses it too.
    name: accountName.regex(/\D/, 'not all digits (it would read as a token id)'),
    scope: z.enum(['enqueue', 'viewer', 'operator', 'admin']),
  })
  .strict();

/** A user's sign-in name in a path. */
export const userName = safeText(1, 64);
/** PATCH /api/admin/users/:name: the user's new role. */
export const userRoleBody = z.object({ role: z.enum(['viewer', 'operator', 'admin']), reason: reasonText.optional() }).strict();
/** A token's id in a path. */
export const tokenId = z.string().regex(/^[1-9][0-9]{0,17}$/, 'must be a token id');

// ------------------------------------------------------------------ saved views

export const viewPage = z.enum(VIEW_PAGES).meta({ description: 'The console page the view filters: `jobs` (/jobs) or `dead-letter` (/dead-letter).' });

/**
 * A view's name: one line of text people choose from in a menu, so nothing the menu would
 * show as an escape (lib/ui/visible.ts: controls, line separators, bidi controls). Stored in
 * NFC: "é" typed as one code point or as e + U+0301 is one name to whoever reads it, and to
 * the unique index.
 */
export const viewName = safeText(1, MAX_VIEW_NAME)
  .refine((s) => s.trim() === s, 'must not start or end with whitespace')
  .refine((s) => !hasHidden(s), 'must be one line, without control characters')
  .transform((s) => s.normalize('NFC'));

/**
 * Why `raw` is not a query string the page reads as written, or the query as the page's URL
 * carries it (lib/views/pages.ts viewQueryOf: its filters in the filter bar's order). Each
 * filter is checked as the API checks it (filterFields) and must be one the page takes and
 * keeps as written: a view saved with `statu=failed`, `status=faild` or a padded queue would
 * show every job, as the page drops what it does not read.
 */
export function checkViewQuery(page: ViewPage, raw: string): { ok: true; query: string } | { ok: false; message: string } {
  const fail = (message: string) => ({ ok: false as const, message });
  const text = raw.startsWith('?') ? raw.slice(1) : raw;
  for (const part of text.split(/[&=]/)) {
    try {
      decodeURIComponent(part.replace(/\+/g, ' '));
    } catch {
      return fail('not valid percent-encoded UTF-8');
    }
  }
  const params = new URLSearchParams(text);
  const takes = VIEW_PAGE_FILTERS[page] as readonly string[];
  const seen = new Set<string>();
  for (const [key, value] of params) {
    const name = key.slice(0, 64);
    if (!takes.includes(key)) {
      return fail(`${JSON.stringify(name)} is not a filter of ${VIEW_PAGE_PATHS[page]} (it takes ${takes.join(', ')})`);
    }
    if (seen.has(key)) return fail(`${name} is given more than once`);
    seen.add(key);
    if (value === '') return fail(`${name} is empty (leave the filter out)`);
    if (value.trim() !== value) return fail(`${name} must not start or end with whitespace`);
    const checked = filterFields[key as keyof typeof filterFields].safeParse(value);
    if (!checked.success) return fail(`${name}: ${checked.error.issues[0]!.message}`);
  }
  const kept = filtersFromParams(params) as Record<string, string | undefined>;
  const dropped = [...seen].find((k) => kept[k] !== params.get(k));
  if (dropped) return fail(`${dropped}: ${VIEW_PAGE_PATHS[page]} would not read it as written`);
  return { ok: true, query: viewQueryOf(page, params) };
}

/** POST /api/views: the query is stored as the page's URL carries it (checkViewQuery). */
export const viewBody = z
  .object({
    name: viewName.meta({ description: `Unique on its page whatever its case; 1-${MAX_VIEW_NAME} characters, one line.`, example: 'Failed payments, last 24h' }),
    page: viewPage,
    query: z
      .string()
      .max(MAX_VIEW_QUERY)
      .meta({
        description:
          "The page's filters as its URL carries them (a leading ? is dropped): only the filters that page takes, each as the jobs list's API checks it, once. Stored in the page's own order.",
        example: 'type=payment.charge&finishedSince=24h',
      }),
  })
  .strict()
  .transform((b, ctx) => {
    const q = checkViewQuery(b.page, b.query);
    if (q.ok) return { ...b, query: q.query };
    ctx.addIssue({ code: 'custom', message: q.message, path: ['query'] });
    return z.NEVER;
  });

/** GET /api/views?page= */
export const viewsQuery = z.object({ page: viewPage.optional().meta({ description: "One page's views; without it, every page's." }) }).strict();

/** A saved view's id in a path. */
export const viewId = z.string().regex(/^[1-9][0-9]{0,17}$/, 'must be a view id');
