/** The OpenAPI 3.1 document of the HTTP API, generated from the registry (zod-openapi). */
import { createDocument, type ZodOpenApiPathsObject } from 'zod-openapi';
import type { ApiRoute } from './registry';
import { apiRoutes } from './routes';

export const API_VERSION = '0.1.0';

export function buildOpenApiDocument(routes: readonly ApiRoute[] = apiRoutes) {
  const paths: ZodOpenApiPathsObject = {};
  for (const r of routes) {
    const item = (paths[r.path] ??= {});
    if (item[r.method]) throw new Error(`OpenAPI registry: ${r.method.toUpperCase()} ${r.path} is described twice`);
    item[r.method] = r.operation;
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
    ],
    paths,
  });
}

let cached: ReturnType<typeof buildOpenApiDocument> | null = null;

/** The document, built once per process. */
export function openApiDocument() {
  cached ??= buildOpenApiDocument();
  return cached;
}
