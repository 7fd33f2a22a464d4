/** Queue controls and recurring jobs: /api/queues, /api/queues/:name, /api/schedules. */
import { z } from 'zod';
import { queueControlsBody, queueName } from '../../schemas';
import { queueControlResultSchema, queueControlsSchema, schedulesSchema } from '../../responses';
import { apiRoute, commonErrors, errorResponse, jsonResponse, noQueryError } from '../registry';

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
];
