/** The OpenAPI 3.1 document of the HTTP API, generated from the registry (zod-openapi). */
import { createDocument, type ZodOpenApiPathsObject } from 'zod-openapi';
import { type ApiRoute, errorResponse } from './registry';
import { apiRoutes } from './routes';

export const API_VERSION = '0.1.0';

export function buildOpenApiDocument(routes: readonly ApiRoute[] = apiRoutes) {
  const paths: ZodOpenApiPathsObject = {};
  for (const r of routes) {
    const item = (paths[r.path] ??= {});
    if (item[r.method]) throw new Error(`OpenAPI registry: ${r.method.toUpperCase()} ${r.path} is described twice`);
    item[r.method] = withAccessResponses(r.operation);
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Leasehold',
      version: API_VERSION,
      description:
        'A job queue whose truth lives in PostgreSQL. Errors are `{"error": {"code", "message"}}` with a 4xx/5xx status; ' +
        'job ids are strings; times are ISO 8601 (database clock).',
    },
    tags: [
      { name: 'jobs', description: 'Enqueue, list and inspect jobs.' },
      { name: 'actions', description: 'Operator actions: the same compare-and-swap statements the console buttons run.' },
      { name: 'console', description: "The operator console's reads and bulk actions (preview, then apply)." },
      { name: 'operations', description: 'Recover, counts, workers, health and metrics.' },
      { name: 'access', description: 'Sign-in, sessions, first-admin setup and the audit log.' },
    ],
    components: {
      securitySchemes: {
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'leasehold_session',
          description:
            'The console session (POST /api/auth/signin). State-changing requests with it must come from the same origin (Origin or Referer) ' +
            'and be non-simple (Content-Type: application/json or the x-leasehold-request header), else 403 csrf.',
        },
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API token (`npx leasehold token create --name NAME --scope enqueue|viewer|operator|admin`). Revoked tokens get 401 at once.',
        },
      },
    },
    security: [{ session: [] }, { bearer: [] }],
    paths,
  });
}

/**
 * Every operation that needs credentials can answer 401 (none, or bad ones) and 403 (the
 * role or the token's scope does not allow it, or a cookie request failed the CSRF checks).
 */
function withAccessResponses(op: ApiRoute['operation']): ApiRoute['operation'] {
  if (Array.isArray(op.security) && op.security.length === 0) return op;
  return {
    ...op,
    responses: {
      ...op.responses,
      '401': op.responses?.['401'] ?? errorResponse('No credentials, or an invalid, expired or revoked session or token.'),
      '403': op.responses?.['403'] ?? errorResponse('The role or token scope does not allow this, or (with a session) a cross-site or simple request: csrf.'),
    },
  };
}

let cached: ReturnType<typeof buildOpenApiDocument> | null = null;

/** The document, built once per process. */
export function openApiDocument() {
  cached ??= buildOpenApiDocument();
  return cached;
}
