/** Queue controls and recurring jobs: /api/queues, /api/queues/:name, /api/schedules, /api/schedules/:name (define, remove), /api/schedules/:name/run|pause|resume, and /api/cron (a cron expression's next ticks). */
import { z } from 'zod';
import { cronTicksQuery, queueControlsBody, queueName, reasonBody, scheduleBody, scheduleName } from '../../schemas';
import { cronTicksSchema, queueControlResultSchema, queueControlsSchema, scheduleChangeSchema, scheduleDefinedSchema, scheduleRemovedSchema, scheduleRunSchema, schedulesSchema } from '../../responses';
import { apiRoute, commonErrors, errorResponse, jsonResponse, noQueryError } from '../registry';

const scheduleParams = z.object({ name: scheduleName.meta({ description: 'The schedule (URL-encoded).' }) });

export const queueRoutes = [
  apiRoute('get', '/api/queues', {
    operationId: 'listQueueControls',
    summary: 'The paused or limited queues, with their running jobs against the limits',
    tags: ['operations'],
    responses: { ...noQueryError, '200': jsonResponse('Every queue that has controls (a queue not listed has none).', queueControlsSchema), ...commonErrors },
  }),
  apiRoute('post', '/api/queues/{name}', {
    operationId: 'setQueueControls',
    summary: 'Pause or resume a queue; set (n) or clear (0) its global concurrency and rate limits',
    description:
      'Every worker on every host honours them at claim time: a paused queue is not claimed from; a limited one is claimed under ' +
      "its row lock, so the limits hold across processes. Fields left out keep their value.",
    tags: ['operations', 'actions'],
    requestParams: { path: z.object({ name: queueName.meta({ description: 'The queue (URL-encoded).' }) }) },
    requestBody: { required: true, content: { 'application/json': { schema: queueControlsBody } } },
    responses: {
      '200': jsonResponse("The queue's controls after the change.", queueControlResultSchema),
      '400': errorResponse('The body or the queue name is invalid.'),
      '413': errorResponse('The body is over 64 KiB.'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/schedules', {
    operationId: 'listSchedules',
    summary: 'The recurring jobs (cron schedules)',
    tags: ['operations'],
    responses: { ...noQueryError, '200': jsonResponse('The schedules, with their next tick (database clock).', schedulesSchema), ...commonErrors },
  }),
  apiRoute('get', '/api/cron', {
    operationId: 'cronTicks',
    summary: "A cron expression's next ticks, as a schedule would run it",
    description:
      'Computed as the workers compute a schedule\'s next tick (from the database clock; `name` fixes what an H stands for). The console\'s schedule dialog shows them while an expression is typed. Writes nothing.',
    tags: ['operations'],
    requestParams: { query: cronTicksQuery },
    responses: {
      '200': jsonResponse('The ticks.', cronTicksSchema),
      '400': errorResponse('Not a cron expression or time zone (the message says why), or an unknown parameter.'),
      ...commonErrors,
    },
  }),
  apiRoute('put', '/api/schedules/{name}', {
    operationId: 'defineSchedule',
    summary: 'Define or redefine a recurring job',
    description:
      "As `leasehold schedule add`: its type and payload are checked as an enqueue's, the cron and the time zone by the schedule itself. " +
      'A paused schedule stays paused and a disabled one disabled; an unchanged cron and zone keep its next tick. A schedule a handlers module defines is defined again at each worker start. ' +
      'Audited as `schedule.add`.',
    tags: ['operations', 'actions'],
    requestParams: {
      path: scheduleParams,
      header: z.object({ 'if-none-match': z.literal('*').optional().meta({ description: 'Create only: a name already taken is refused (409) instead of redefined.' }) }),
    },
    requestBody: { required: true, content: { 'application/json': { schema: scheduleBody } } },
    responses: {
      '200': jsonResponse('The schedule as it is now, with its next tick.', scheduleDefinedSchema),
      '409': errorResponse('If-None-Match: * was sent and a schedule by that name exists.'),
      '400': errorResponse('The body, the cron expression, the time zone, the payload or the name is invalid.'),
      '413': errorResponse('The body or the payload is too large.'),
      '422': errorResponse('The type is not known (no worker registers it).'),
      ...commonErrors,
    },
  }),
  apiRoute('delete', '/api/schedules/{name}', {
    operationId: 'removeSchedule',
    summary: 'Remove a recurring job (the jobs it enqueued stay)',
    description: 'Audited as `schedule.remove`.',
    tags: ['operations', 'actions'],
    requestParams: { path: scheduleParams },
    requestBody: { required: false, content: { 'application/json': { schema: reasonBody } } },
    responses: {
      '200': jsonResponse('Removed.', scheduleRemovedSchema),
      '400': errorResponse('The body or the schedule name is invalid.'),
      '404': errorResponse('No such schedule.'),
      '413': errorResponse('The body is over 64 KiB.'),
      ...commonErrors,
    },
  }),
  apiRoute('post', '/api/schedules/{name}/run', {
    operationId: 'runScheduleNow',
    summary: "Enqueue the job a schedule's ticks make, now, leaving its next tick where it is",
    description:
      'Also for a paused or disabled schedule. The job\'s idempotency key is `schedule-run:<name>:<second>` (database clock, UTC), never a tick\'s ' +
      '`schedule:<name>:<tick>`; a repeat within the same or the next second (a double click, a retried request) answers the job the first one made, with `created: false`. ' +
      "For a schedule that runs one at a time (overlap 'skip'), a run of it still queued, retrying or running is the answer (`created: false, overlapping: true`).",
    tags: ['operations', 'actions'],
    requestParams: { path: scheduleParams },
    requestBody: { required: false, content: { 'application/json': { schema: reasonBody } } },
    responses: {
      '202': jsonResponse('The job (enqueued now, by a run-now a moment before, or the unfinished run of a schedule that runs one at a time).', scheduleRunSchema),
      '400': errorResponse('The body or the schedule name is invalid.'),
      '404': errorResponse('No such schedule.'),
      '413': errorResponse('The body is over 64 KiB.'),
      ...commonErrors,
    },
  }),
  ...(['pause', 'resume'] as const).map((verb) =>
    apiRoute('post', `/api/schedules/{name}/${verb}`, {
      operationId: `${verb}Schedule`,
      summary:
        verb === 'pause'
          ? "Stop a schedule's ticks until it is resumed (jobs already enqueued are left alone)"
          : 'Let a paused schedule tick again, from its next tick after now (the ticks missed while paused are not owed)',
      description: `Idempotent: ${verb === 'pause' ? 'pausing a paused schedule' : 'resuming a running one'} changes nothing and answers \`changed: false\`. The pause is the operator's, kept apart from the definition's \`enabled\`: a worker start that upserts the definition again does not undo it.`,
      tags: ['operations', 'actions'],
      requestParams: { path: scheduleParams },
      requestBody: { required: false, content: { 'application/json': { schema: reasonBody } } },
      responses: {
        '200': jsonResponse('The schedule as it is now.', scheduleChangeSchema),
        '400': errorResponse('The body or the schedule name is invalid (or, for a resume, its stored cron expression).'),
        '404': errorResponse('No such schedule.'),
        '413': errorResponse('The body is over 64 KiB.'),
        ...commonErrors,
      },
    }),
  ),
];
