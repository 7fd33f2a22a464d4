/** /api/jobs and /api/jobs/:id/* — enqueue, list, one job, its result, the CAS actions. (The console's /api/jobs/lookup and /newer are in ./console.) */
import { z } from 'zod';
import { copyBody, enqueueRequest, exportQuery, MAX_EXPORTS_PER_VIEWER, jobDetailQuery, jobId, listQuery, reasonBody, requeueBody, rescheduleBody } from '../../schemas';
import {
  actionConflictSchema,
  actionItemSchema,
  copiedSchema,
  enqueuedManySchema,
  enqueuedSchema,
  jobDetailSchema,
  jobPageSchema,
} from '../../responses';
import { apiRoute, commonErrors, errorResponse, jsonResponse, noQueryError } from '../registry';

const idParam = z.object({ id: jobId.meta({ description: 'The job id.' }) });

export const jobRoutes = [
  apiRoute('post', '/api/jobs', {
    operationId: 'enqueueJobs',
    summary: 'Enqueue one job (an object) or up to 1000 (an array)',
    description:
      'Answers 202 only after the INSERT has committed; workers are rung after that. A payload is checked against its job type. ' +
      'An idempotencyKey used again returns the first job (`created: false`); so does a singletonKey that a queued, retrying or running job holds (that job). ' +
      'A demo.sleep with `crash: true` (it kills the worker process that runs it) needs the operator role: an enqueue token gets 403.',
    tags: ['jobs'],
    requestBody: { required: true, content: { 'application/json': { schema: enqueueRequest } } },
    responses: {
      '202': {
        description: 'Accepted and committed: `{id, created}` for an object, `{jobs: [...]}` for an array.',
        content: { 'application/json': { schema: z.union([enqueuedSchema, enqueuedManySchema]) } },
      },
      '400': errorResponse('Malformed JSON, a field out of range, an unknown field, or a payload that breaks its type schema.'),
      '413': errorResponse('A payload is over 1 MiB (its JSON as stored), or the whole body over 16 MiB (an array of jobs included: send large ones in several requests).'),
      '422': errorResponse('An unknown job type: neither built in nor registered by a worker that runs it (its LEASEHOLD_HANDLERS module).'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/jobs', {
    operationId: 'listJobs',
    summary: 'List jobs, newest first, in keyset pages',
    description:
      "Filters combine (AND). Status, id and a running job's worker are served by indexes; the others (queue, type, error, payload, fingerprint, " +
      'text in q) are searched a window of ids at a time, and a page that spent its time budget before it was full says so in `partial`. ' +
      'Rows are cut for lists: a payload over 2 KiB is left out (payloadOmitted), the error is cut to 500 characters, checkpoints are not read.',
    tags: ['jobs'],
    requestParams: { query: listQuery },
    responses: {
      '200': jsonResponse('A page of jobs; pass nextCursor as cursor for the next page.', jobPageSchema),
      '400': errorResponse('A filter, the cursor or the limit is invalid, or a parameter is unknown.'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/jobs/export', {
    operationId: 'exportJobs',
    summary: "Every job matching the list's filters, as a download (CSV or NDJSON)",
    description:
      "The list's filters and order (GET /api/jobs), walked page by page as the client reads, pinned to the jobs that existed when it began. " +
      'Rows as lists carry them (an error cut to 500 characters, a payload over 2 KiB left out: open the job). ' +
      'It ends at `max` jobs or after 60 s, and says so last: NDJSON ends with `{"export": {rows, complete, cut, nextCursor}}`; ' +
      'a CSV cut short ends with a line starting `# cut at`. Text a spreadsheet would run as a formula is prefixed with \'. ' +
      'A viewer gets the hidden payload keys (LEASEHOLD_REDACT_KEYS) redacted, as in the list.',
    tags: ['jobs'],
    requestParams: { query: exportQuery },
    responses: {
      '200': {
        description: 'The jobs, as an attachment (`content-disposition: attachment; filename="jobs-<status>-<time>.csv"`).',
        content: {
          'text/csv': { schema: z.string().meta({ description: 'A header row (id, status, queue, type, attempt_count, max_attempts, worker_id, created_at, run_at, started_at, finished_at, error, payload), one row per job.' }) },
          'application/x-ndjson': { schema: z.string().meta({ description: 'One job per line (as GET /api/jobs lists it), then the summary line.' }) },
        },
      },
      '400': errorResponse('A filter, the format or max is invalid, or a parameter is unknown.'),
      '429': errorResponse(`This user or token runs ${MAX_EXPORTS_PER_VIEWER} exports on this console already (Retry-After: the seconds until the first has ended at the latest).`),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/jobs/{id}', {
    operationId: 'getJob',
    summary: 'One job with every attempt',
    tags: ['jobs'],
    requestParams: { path: idParam, query: jobDetailQuery },
    responses: {
      '200': jsonResponse('The job, its attempts (the running one included) and the database clock.', jobDetailSchema),
      '400': errorResponse('An unknown query parameter, or payload other than 0 or 1.'),
      '404': errorResponse('No such job.'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/jobs/{id}/result', {
    operationId: 'getJobResult',
    summary: "A completed job's result, as its handler returned it",
    description: 'The stored JSON, byte for byte, served inline (`content-disposition: inline; filename="job-<id>-result.json"`).',
    tags: ['jobs'],
    requestParams: { path: idParam },
    responses: {
      '200': {
        description: 'The result (any JSON value).',
        headers: z.object({
          'content-disposition': z.string().meta({ description: 'inline; filename="job-<id>-result.json"' }),
        }),
        content: { 'application/json': { schema: z.unknown().meta({ description: 'The JSON value the handler returned.' }) } },
      },
      ...noQueryError,
      '404': errorResponse('No such job, the job has no result (it has not completed, or its handler returned nothing), or the result is missing from the result store.'),
      ...commonErrors,
    },
  }),
  apiRoute('post', '/api/jobs/{id}/requeue', {
    operationId: 'requeueJob',
    summary: 'Put a finished job back in the queue (a running one only with revokeLease)',
    tags: ['jobs', 'actions'],
    requestParams: { path: idParam },
    requestBody: { required: false, content: { 'application/json': { schema: requeueBody } } },
    responses: {
      '200': jsonResponse('Requeued (or its lease revoked).', actionItemSchema),
      '400': errorResponse('The body is invalid.'),
      '404': errorResponse('No such job.'),
      '413': errorResponse('The body is over 64 KiB.'),
      '409': jsonResponse("The job's state forbids it; the reason and the job as it stands.", actionConflictSchema),
      ...commonErrors,
    },
  }),
  apiRoute('post', '/api/jobs/{id}/cancel', {
    operationId: 'cancelJob',
    summary: 'Cancel a waiting job at once; ask a running one to stop',
    tags: ['jobs', 'actions'],
    requestParams: { path: idParam },
    requestBody: { required: false, content: { 'application/json': { schema: reasonBody } } },
    responses: {
      '200': jsonResponse('Cancelled, or cancel requested (the handler aborts at its next heartbeat).', actionItemSchema),
      '400': errorResponse('The body is invalid.'),
      '404': errorResponse('No such job.'),
      '413': errorResponse('The body is over 64 KiB.'),
      '409': jsonResponse("The job's state forbids it; the reason and the job as it stands.", actionConflictSchema),
      ...commonErrors,
    },
  }),
  apiRoute('post', '/api/jobs/{id}/reschedule', {
    operationId: 'rescheduleJob',
    summary: 'Move a waiting job: a new due time, a new priority, or both',
    description:
      'For a queued or retrying job: its attempts, budget and checkpoints stay. Due afterwards, it is rung at its new level. ' +
      'A running job is refused (its worker holds it), as is a finished one (requeue it to run it again). Audited as `reschedule`.',
    tags: ['jobs', 'actions'],
    requestParams: { path: idParam },
    requestBody: { required: true, content: { 'application/json': { schema: rescheduleBody } } },
    responses: {
      '200': jsonResponse('Rescheduled: the job as it stands now.', actionItemSchema),
      '400': errorResponse('The body is invalid, or gives neither runAt nor priority.'),
      '404': errorResponse('No such job.'),
      '413': errorResponse('The body is over 64 KiB.'),
      '409': jsonResponse("The job's state forbids it; the reason and the job as it stands.", actionConflictSchema),
      ...commonErrors,
    },
  }),
  apiRoute('post', '/api/jobs/{id}/copy', {
    operationId: 'copyJob',
    summary: "Enqueue a new job of this job's type: its payload mended, or as it was (the original stays as it ran)",
    description:
      "Fields left out are the original's: payload, queue and the attempts it was enqueued with; due now unless runAt. The copy is checked as POST /api/jobs checks a job. " +
      "It keeps the original's singleton key. Audited as `copy` on both jobs.",
    tags: ['jobs', 'actions'],
    requestParams: { path: idParam },
    requestBody: { required: false, content: { 'application/json': { schema: copyBody } } },
    responses: {
      '202': jsonResponse('Enqueued and committed.', copiedSchema),
      '400': errorResponse('The body is invalid, or the payload does not fit the type (or holds a number JSON cannot carry exactly).'),
      '404': errorResponse('No such job.'),
      '409': errorResponse('A queued, retrying or running job (the original itself, if unfinished) holds its singleton key: nothing was enqueued (copy it once that job has finished).'),
      '413': errorResponse('The body or the payload is too large.'),
      '422': errorResponse('The type is no longer known (no worker registers it).'),
      ...commonErrors,
    },
  }),
];
