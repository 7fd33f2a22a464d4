/** Operating the queue: recover, stats, workers, health, metrics, and this document. */
import { z } from 'zod';
import { historyQuery, reasonBody, recoverBody, workerIdParam } from '../../schemas';
import { healthSchema, recoverReportSchema, statsHistorySchema, statsSchema, workerQuietSchema, workersSchema } from '../../responses';
import { apiRoute, commonErrors, errorResponse, jsonResponse, noQueryError } from '../registry';

export const operationRoutes = [
  apiRoute('post', '/api/recover', {
    operationId: 'recover',
    summary: 'Run (or preview with dryRun) the recover sweep',
    description: 'Moves running jobs with expired leases on (retrying, failed or cancelled) and re-rings due jobs whose signal was lost.',
    tags: ['operations'],
    requestBody: { required: false, content: { 'application/json': { schema: recoverBody } } },
    responses: {
      '200': jsonResponse('What was (or would be) touched.', recoverReportSchema),
      '400': errorResponse('The body is invalid.'),
      '413': errorResponse('The body is over 64 KiB.'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/stats', {
    operationId: 'getStats',
    summary: 'Counts per status and queue, oldest due job, expired leases, workers alive',
    tags: ['operations'],
    responses: { ...noQueryError, '200': jsonResponse('The counts.', statsSchema), ...commonErrors },
  }),
  apiRoute('get', '/api/stats/history', {
    operationId: 'getStatsHistory',
    summary: "The workers' counters over the last 24 hours or 7 days: rates per bucket and per job type",
    description: 'From the record the recover sweep keeps (one sample a minute, a week long), shared by every viewer of a console process for 30 s.',
    tags: ['operations'],
    requestParams: { query: historyQuery },
    responses: {
      '200': jsonResponse('The range.', statsHistorySchema),
      '400': errorResponse('range is missing or not 24h or 7d, or another parameter was given.'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/workers', {
    operationId: 'listWorkers',
    summary: 'Worker process incarnations, live ones first',
    tags: ['operations'],
    responses: { ...noQueryError, '200': jsonResponse('The worker processes.', workersSchema), ...commonErrors },
  }),
  ...(['quiet', 'resume'] as const).map((verb) =>
    apiRoute('post', `/api/workers/{id}/${verb}`, {
      operationId: `${verb}Worker`,
      summary:
        verb === 'quiet'
          ? 'Quiet a worker process: it claims no new job; those in hand finish, their leases renewed'
          : 'Let a quieted worker process claim again',
      description: `The process reads the request with its next heartbeat (a third of a lease by default). Idempotent: ${verb === 'quiet' ? 'quieting a quiet worker' : 'resuming one that claims'} answers \`changed: false\`. A restarted process (a new id) claims again. Operator or admin; audited (\`worker.${verb}\`).`,
      tags: ['operations', 'actions'],
      requestParams: { path: z.object({ id: workerIdParam.meta({ description: 'The worker id (host:pid:suffix, URL-encoded).' }) }) },
      requestBody: { required: false, content: { 'application/json': { schema: reasonBody } } },
      responses: {
        '200': jsonResponse('What was asked, and whether it changed anything.', workerQuietSchema),
        '400': errorResponse('The body or the worker id is invalid.'),
        '404': errorResponse('No such worker.'),
        '409': errorResponse('The worker has stopped (it claims nothing), or has not said it reads quiet requests (an earlier version, or not reported since it started).'),
        '413': errorResponse('The body is over 64 KiB.'),
        ...commonErrors,
      },
    }),
  ),
  apiRoute('get', '/api/health', {
    operationId: 'health',
    summary: 'Liveness; with ?ready, readiness (PostgreSQL answers; whether Redis is in use)',
    description: 'Open without sign-in (load balancers and supervisors probe it); it reveals nothing about jobs.',
    tags: ['operations'],
    security: [],
    requestParams: {
      query: z.object({ ready: z.string().optional().meta({ description: 'Present (any value) for the readiness check.' }) }),
    },
    responses: {
      '200': jsonResponse('Alive (and ready, with ?ready).', healthSchema),
      '503': errorResponse('Not ready: PostgreSQL did not answer.'),
    },
  }),
  apiRoute('get', '/api/metrics', {
    operationId: 'metrics',
    summary: 'Prometheus metrics (text format 0.0.4)',
    tags: ['operations'],
    responses: {
      ...noQueryError,
      '200': {
        description: 'Jobs per queue and status, worker counters and histograms, workers alive, signal backlog, process metrics.',
        content: { 'text/plain': { schema: z.string() } },
      },
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/openapi.json', {
    operationId: 'openapi',
    summary: 'This OpenAPI 3.1 document',
    description: 'Open without sign-in: it describes the API, and holds no data.',
    tags: ['operations'],
    security: [],
    responses: {
      ...noQueryError,
      '200': jsonResponse('The document.', z.looseObject({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) })),
    },
  }),
];
