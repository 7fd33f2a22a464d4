/** /api/jobs and /api/jobs/:id/* — enqueue, list, one job, the CAS actions. */
import { z } from 'zod';
import { cancelBody, enqueueRequest, jobId, listQuery, requeueBody } from '../../schemas';
import {
  actionConflictSchema,
  actionItemSchema,
  enqueuedManySchema,
  enqueuedSchema,
  jobDetailSchema,
  jobPageSchema,
} from '../../responses';
import { apiRoute, commonErrors, errorResponse, jsonResponse } from '../registry';

const idParam = z.object({ id: jobId.meta({ description: 'The job id.' }) });

export const jobRoutes = [
  apiRoute('post', '/api/jobs', {
    operationId: 'enqueueJobs',
    summary: 'Enqueue one job (an object) or up to 1000 (an array)',
    description:
      'Answers 202 only after the INSERT has committed; workers are rung after that. A payload is checked against its job type. ' +
      'An idempotencyKey used again returns the first job (`created: false`).',
    tags: ['jobs'],
    requestBody: { required: true, content: { 'application/json': { schema: enqueueRequest } } },
    responses: {
      '202': {
        description: 'Accepted and committed: `{id, created}` for an object, `{jobs: [...]}` for an array.',
        content: { 'application/json': { schema: z.union([enqueuedSchema, enqueuedManySchema]) } },
      },
      '400': errorResponse('Malformed JSON, a field out of range, an unknown field, or a payload that breaks its type schema.'),
      '413': errorResponse('The body or a payload is over the limit (1 MiB per payload).'),
      '422': errorResponse('An unknown job type.'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/jobs', {
    operationId: 'listJobs',
    summary: 'List jobs, newest first, in keyset pages',
    tags: ['jobs'],
    requestParams: { query: listQuery },
    responses: {
      '200': jsonResponse('A page of jobs; pass nextCursor as cursor for the next page.', jobPageSchema),
      '400': errorResponse('A filter is invalid.'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/jobs/{id}', {
    operationId: 'getJob',
    summary: 'One job with every attempt',
    tags: ['jobs'],
    requestParams: { path: idParam },
    responses: {
      '200': jsonResponse('The job, its attempts (the running one included) and the database clock.', jobDetailSchema),
      '404': errorResponse('No such job.'),
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
      '409': jsonResponse("The job's state forbids it; the reason and the job as it stands.", actionConflictSchema),
      ...commonErrors,
    },
  }),
  apiRoute('post', '/api/jobs/{id}/cancel', {
    operationId: 'cancelJob',
    summary: 'Cancel a waiting job at once; ask a running one to stop',
    tags: ['jobs', 'actions'],
    requestParams: { path: idParam },
    requestBody: { required: false, content: { 'application/json': { schema: cancelBody } } },
    responses: {
      '200': jsonResponse('Cancelled, or cancel requested (the handler aborts at its next heartbeat).', actionItemSchema),
      '400': errorResponse('The body is invalid.'),
      '404': errorResponse('No such job.'),
      '409': jsonResponse("The job's state forbids it; the reason and the job as it stands.", actionConflictSchema),
      ...commonErrors,
    },
  }),
];
