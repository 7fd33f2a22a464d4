/** Saved views: the console's named, shared filters of /jobs and /dead-letter. */
import { z } from 'zod';
import { reasonBody, viewBody, viewId, viewsQuery } from '../../schemas';
import { savedViewSchema, savedViewsSchema } from '../../responses';
import { apiRoute, commonErrors, errorResponse, jsonResponse } from '../registry';

export const viewRoutes = [
  apiRoute('get', '/api/views', {
    operationId: 'listViews',
    summary: "The saved views (one page's, or every page's): shared by everyone who signs in",
    tags: ['console'],
    requestParams: { query: viewsQuery },
    responses: { '200': jsonResponse('The views, each saying whether the caller may delete it. A viewer reads a payload filter on a hidden key (LEASEHOLD_REDACT_KEYS) as `key=[redacted]`.', savedViewsSchema), '400': errorResponse('A query parameter is invalid.'), ...commonErrors },
  }),
  apiRoute('post', '/api/views', {
    operationId: 'saveView',
    summary: "Save a page's filters under a name everyone sees (operator or admin; audited)",
    description: 'The query must hold only filters the page takes, each valid and given once (a view that filters nothing it meant to would mislead whoever opens it).',
    tags: ['console'],
    requestBody: { required: true, content: { 'application/json': { schema: viewBody } } },
    responses: {
      '201': jsonResponse('The saved view.', savedViewSchema),
      '400': errorResponse('The body is invalid: a name too long or not one line, an unknown page, or a query with a filter the page does not take (or an invalid one).'),
      '409': errorResponse('The page has a view of this name (names are compared without case), or as many views as it keeps (200).'),
      '413': errorResponse('The body is too large.'),
      ...commonErrors,
    },
  }),
  apiRoute('delete', '/api/views/{id}', {
    operationId: 'deleteView',
    summary: 'Delete a saved view: its creator or an admin (audited)',
    tags: ['console'],
    requestParams: { path: z.object({ id: viewId }) },
    requestBody: { required: false, content: { 'application/json': { schema: reasonBody } } },
    responses: {
      '200': jsonResponse('The view as it was.', savedViewSchema),
      '400': errorResponse('The body is invalid, or a query parameter was given (it takes none).'),
      '403': errorResponse('Someone else saved it (only they or an admin may delete it); a viewer; or a cross-site request (csrf).'),
      '404': errorResponse('No saved view with this id.'),
      ...commonErrors,
    },
  }),
];
