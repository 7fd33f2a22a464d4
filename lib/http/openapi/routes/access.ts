/** Sign-in, sign-out, who am I, first-admin setup, and the audit log. */
import { z } from 'zod';
import { auditQuery, emptyBody, reasonBody, setupBody, signInBody, tokenBody, tokenId, userBody, userName, userRoleBody } from '../../schemas';
import { auditPageSchema, createdTokenSchema, meSchema, okSchema, roleChangeSchema, signedInSchema, tokenSchema, tokensSchema, userSchema, usersSchema } from '../../responses';
import { apiRoute, commonErrors, errorResponse, jsonResponse, noQueryError } from '../registry';

export const accessRoutes = [
  apiRoute('post', '/api/auth/signin', {
    operationId: 'signIn',
    summary: 'Sign in: sets the session cookie (httpOnly, SameSite=Lax, Secure over HTTPS)',
    description: 'Failed attempts are limited per account and per address (429 with Retry-After). A cross-site request is refused (403 csrf).',
    tags: ['access'],
    security: [],
    requestBody: { required: true, content: { 'application/json': { schema: signInBody } } },
    responses: {
      '200': jsonResponse('Signed in; the cookie is set.', signedInSchema),
      '400': errorResponse('The body is invalid.'),
      '401': errorResponse('Wrong name or password.'),
      '403': errorResponse('A cross-site request (csrf).'),
      '413': errorResponse('The body is too large.'),
      '429': errorResponse('Too many failed attempts for this account or address.'),
      ...commonErrors,
    },
  }),
  apiRoute('post', '/api/auth/signout', {
    operationId: 'signOut',
    summary: 'Sign out: the session ends on the server and the cookie is cleared',
    tags: ['access'],
    security: [],
    requestBody: { required: false, content: { 'application/json': { schema: emptyBody } } },
    responses: {
      '200': jsonResponse('Signed out.', okSchema),
      '400': errorResponse('A body other than {}, or a query parameter (it takes none).'),
      '403': errorResponse('A cross-site request (csrf).'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/auth/me', {
    operationId: 'me',
    summary: 'Who is signed in, with their role',
    tags: ['access'],
    responses: { ...noQueryError, '200': jsonResponse('The signed-in user or token.', meSchema), ...commonErrors },
  }),
  apiRoute('post', '/api/auth/setup', {
    operationId: 'setupFirstAdmin',
    summary: 'Create the first admin from the one-time setup link `npm start` prints while there are no users',
    tags: ['access'],
    security: [],
    requestBody: { required: true, content: { 'application/json': { schema: setupBody } } },
    responses: {
      '201': jsonResponse('The admin exists and is signed in.', signedInSchema),
      '400': errorResponse('The body is invalid.'),
      '403': errorResponse('The link is invalid, used or expired, or users exist already; or a cross-site request.'),
      '413': errorResponse('The body is too large.'),
      '429': errorResponse('Too many failed attempts from this address.'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/audit', {
    operationId: 'listAudit',
    summary: 'The audit log: every operator action (console, API, CLI), newest first, keyset pages',
    tags: ['access'],
    requestParams: { query: auditQuery },
    responses: { '200': jsonResponse('A page of entries.', auditPageSchema), '400': errorResponse('A query parameter is invalid.'), ...commonErrors },
  }),
  apiRoute('get', '/api/admin/users', {
    operationId: 'listUsers',
    summary: 'The operators and their roles (admin)',
    tags: ['access'],
    responses: { ...noQueryError, '200': jsonResponse('Every user, disabled ones included.', usersSchema), ...commonErrors },
  }),
  apiRoute('post', '/api/admin/users', {
    operationId: 'addUser',
    summary: 'Add an operator (admin; audited)',
    tags: ['access'],
    requestBody: { required: true, content: { 'application/json': { schema: userBody } } },
    responses: {
      '201': jsonResponse('The user.', userSchema),
      '400': errorResponse('The body is invalid.'),
      '409': errorResponse('A user with this name exists.'),
      '413': errorResponse('The body is too large.'),
      ...commonErrors,
    },
  }),
  apiRoute('patch', '/api/admin/users/{name}', {
    operationId: 'setUserRole',
    summary: "Change a user's role (admin; audited)",
    description:
      "The user's sessions act with the new role from their next request. A demotion revokes the API tokens they made whose scope is above the new role.",
    tags: ['access'],
    requestParams: { path: z.object({ name: userName }) },
    requestBody: { required: true, content: { 'application/json': { schema: userRoleBody } } },
    responses: {
      '200': jsonResponse('The user with the new role, the role before and the tokens revoked.', roleChangeSchema),
      '400': errorResponse('The body is invalid.'),
      '404': errorResponse('No active user of that name.'),
      '409': errorResponse('The user is the last active admin: the console would have none.'),
      '413': errorResponse('The body is too large.'),
      ...commonErrors,
    },
  }),
  apiRoute('post', '/api/admin/users/{name}/disable', {
    operationId: 'disableUser',
    summary: 'Disable a user: no more sign-ins, and their sessions end at once (admin; audited)',
    tags: ['access'],
    requestParams: { path: z.object({ name: userName }) },
    requestBody: { required: false, content: { 'application/json': { schema: reasonBody } } },
    responses: {
      '200': jsonResponse('Disabled.', okSchema),
      '400': errorResponse('The body is invalid, or a query parameter was given (it takes none).'),
      '404': errorResponse('No active user of that name.'),
      '409': errorResponse('An admin may not disable themself.'),
      ...commonErrors,
    },
  }),
  apiRoute('get', '/api/admin/tokens', {
    operationId: 'listTokens',
    summary: 'The API tokens, never their secrets (admin)',
    tags: ['access'],
    responses: { ...noQueryError, '200': jsonResponse('Every token, revoked ones included.', tokensSchema), ...commonErrors },
  }),
  apiRoute('post', '/api/admin/tokens', {
    operationId: 'createToken',
    summary: 'Create an API token; its secret is in this answer only (admin; audited)',
    tags: ['access'],
    requestBody: { required: true, content: { 'application/json': { schema: tokenBody } } },
    responses: {
      '201': jsonResponse('The token, with its secret.', createdTokenSchema),
      '400': errorResponse('The body is invalid.'),
      '413': errorResponse('The body is too large.'),
      ...commonErrors,
    },
  }),
  apiRoute('post', '/api/admin/tokens/{id}/revoke', {
    operationId: 'revokeToken',
    summary: 'Revoke a token: its next request gets 401 (admin; audited)',
    tags: ['access'],
    requestParams: { path: z.object({ id: tokenId }) },
    requestBody: { required: false, content: { 'application/json': { schema: reasonBody } } },
    responses: {
      '200': jsonResponse('The revoked token.', tokenSchema),
      '400': errorResponse('The body is invalid, or a query parameter was given (it takes none).'),
      '404': errorResponse('No live token with this id.'),
      ...commonErrors,
    },
  }),
];
