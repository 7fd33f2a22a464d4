/**
 * The operator console's routes: bulk actions with a preview, the live refresh of the
 * rows on screen, the "N new" count, the dead letter's groups and the console's settings.
 */
import { z } from 'zod';
import { LIVE_EVERY_MIN_MS, LIVE_MAX_MS, LIVE_RETRY_MS, MAX_BULK_IDS, MAX_LIVE_STREAMS, MAX_LIVE_STREAMS_PER_VIEWER, MAX_PAGE, actionBody, actionName, liveQuery, lookupQuery, newerQuery } from '../../schemas';
import { BULK_CAP, PREVIEW_ITEMS, REPORT_ITEMS } from '../../../queue/bulk';
import { bulkReportSchema, consoleInfoSchema, deadLetterSchema, jobLookupSchema, newerCountSchema } from '../../responses';
import { apiRoute, commonErrors, errorResponse, jsonResponse, noQueryError } from '../registry';

export const consoleRoutes = [
  apiRoute('post', '/api/actions/{action}', {
    operationId: 'bulkAction',
    summary: 'Requeue, cancel, delete or recover a selection, every job matching a filter, or (recover) the whole sweep — previewed or applied',
    description:
      'Give exactly one target: `ids` (up to ' +
      MAX_BULK_IDS +
      '), `filter` (every job matching it, up to ' +
      BULK_CAP.toLocaleString('en') +
      '; at least one condition besides maxId) or `all: true` (recover only: the sweep over expired leases and missing wake-up signals).\n\n' +
      'With `preview: true` nothing is written: the report says per job what would happen (would_change / would_skip, at most ' +
      PREVIEW_ITEMS +
      ' items) and, for a filter, the newest id it saw (`maxId`): give that back as `filter.maxId` so the action touches no job created after the preview. ' +
      'Without it the action runs batch by batch through the same compare-and-swap statements as the one-job actions; every job that changed meanwhile ' +
      'is skipped with the reason (at most ' +
      REPORT_ITEMS +
      ' items, skips first).\n\n' +
      '`resetAttempts` and `revokeLease` apply to requeue; `expectIds` to recover with `all` (the ids its preview listed: each one the sweep did not move is reported with why). ' +
      '`reason` is accepted and not recorded.',
    tags: ['actions', 'console'],
    requestParams: { path: z.object({ action: actionName.meta({ description: 'The action.' }) }) },
    requestBody: { required: true, content: { 'application/json': { schema: actionBody } } },
    responses: {
      '200': jsonResponse('The preview, or the report of what was done.', bulkReportSchema),
      '400': errorResponse(
        'Malformed JSON; not exactly one target; an invalid id or filter; an empty filter; `all` for an action other than recover; ' +
          'more jobs match the filter than one action may touch.',
      ),
      '404': errorResponse('No such action.'),
      '413': errorResponse('The body is over 256 KiB.'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/jobs/lookup', {
    operationId: 'lookupJobs',
    summary: 'The current rows of these jobs, whatever their status (the console refreshes the rows it shows)',
    tags: ['jobs', 'console'],
    requestParams: { query: lookupQuery },
    responses: {
      '200': jsonResponse('The jobs found, newest first (ids with no job are left out), as lists carry them.', jobLookupSchema),
      '400': errorResponse(`ids is missing, has a malformed id, or more than ${MAX_PAGE}; or an unknown parameter.`),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/live', {
    operationId: 'liveFeed',
    summary: 'The console\'s live feed: server-sent events with what a page watches, every `every` ms',
    description:
      'A `text/event-stream`. Each `every` ms (at least ' +
      LIVE_EVERY_MIN_MS +
      ') it sends, for what was asked: `stats` (the body of GET /api/stats), `lookup` (of GET /api/jobs/lookup), `newer` (of GET /api/jobs/newer, with the filters), `job` and `audit` (of GET /api/jobs/{id} and GET /api/audit?jobId=) and `workers` (of GET /api/workers). ' +
      'A read that fails sends `problem` with an error body instead. After ' +
      LIVE_MAX_MS / 1000 +
      ' s the stream sends `bye` and ends: open a new one (it passes the sign-in check again). It starts with `retry: ' +
      LIVE_RETRY_MS +
      '`. A reader that falls behind misses events rather than queueing them. The reads are shared with the polling routes and among all viewers. ' +
      'Past ' +
      MAX_LIVE_STREAMS +
      ' open streams a console process answers 503, and 429 to a user or token that holds ' +
      MAX_LIVE_STREAMS_PER_VIEWER +
      ' already (with sign-in on), each with Retry-After: the seconds until the first of those streams has ended at the latest. Poll the routes meanwhile.',
    tags: ['console'],
    requestParams: { query: liveQuery },
    responses: {
      '200': { description: 'The event stream.', content: { 'text/event-stream': { schema: z.string() } } },
      '400': errorResponse('Nothing to watch, filters without after, a malformed id or more than ' + MAX_PAGE + ' ids, every out of range, or an unknown parameter.'),
      '429': errorResponse('This user or token holds ' + MAX_LIVE_STREAMS_PER_VIEWER + ' streams on this console already: poll instead.'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/jobs/newer', {
    operationId: 'countNewerJobs',
    summary: 'How many jobs matching the filters are newer than a job ("N new" above the list)',
    description: 'The filters of GET /api/jobs. With a filter no index serves, only the 100,000 ids above `after` are looked at.',
    tags: ['jobs', 'console'],
    requestParams: { query: newerQuery },
    responses: {
      '200': jsonResponse('The count, capped.', newerCountSchema),
      '400': errorResponse('after is missing or not a job id, or a filter is invalid.'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/dead-letter', {
    operationId: 'deadLetter',
    summary: 'Failed jobs grouped by type and error fingerprint, largest group first',
    description:
      'Reads at most the 20,000 newest failed jobs (`complete` says whether that was all of them). Computed at most every 3 s for all viewers. ' +
      'List or act on a group with the `fingerprint` and `type` filters.',
    tags: ['console'],
    responses: { ...noQueryError, '200': jsonResponse('The groups (at most 500).', deadLetterSchema), ...commonErrors },
  }),
  apiRoute('get', '/api/console', {
    operationId: 'consoleInfo',
    summary: "The console's installation: environment badge, lease settings, signal, version",
    tags: ['console'],
    responses: { ...noQueryError, '200': jsonResponse('The settings.', consoleInfoSchema), ...commonErrors },
  }),
];
