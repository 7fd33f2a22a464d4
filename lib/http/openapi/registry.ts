/**
 * The OpenAPI registry: one entry per route handler under app/api, built from the same
 * zod schemas that validate the requests (lib/http/schemas.ts) and that describe the
 * responses (lib/http/responses.ts). To document a new route, add an `apiRoute(...)` to a
 * file in ./routes (or a new file there, listed in ./routes/index.ts); the conformance
 * test (app/api/openapi.db.test.ts) fails while a route file exists that no entry describes.
 */
import type { ZodType } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiResponseObject } from 'zod-openapi';
import { errorSchema } from '../responses';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ApiRoute {
  method: HttpMethod;
  /** The OpenAPI path: `/api/jobs/{id}` for app/api/jobs/[id]/route.ts. */
  path: string;
  operation: ZodOpenApiOperationObject;
}

export function apiRoute(method: HttpMethod, path: string, operation: ZodOpenApiOperationObject): ApiRoute {
  return { method, path, operation };
}

/** A JSON response with this schema. */
export const jsonResponse = (description: string, schema: ZodType): ZodOpenApiResponseObject => ({
  description,
  content: { 'application/json': { schema } },
});

/** An error response: `{"error":{"code","message"}}`. */
export const errorResponse = (description: string): ZodOpenApiResponseObject => jsonResponse(description, errorSchema);

/** The errors every route that touches the database can answer with. */
/** A GET that takes no query parameters refuses any (lib/http/respond.ts noQuery). */
export const noQueryError = { '400': errorResponse('A query parameter this endpoint does not take (it takes none).') } as const;

export const commonErrors = {
  '503': errorResponse('The database is busy or unreachable; the message says whether the request may have been applied (a statement rolled back, nothing sent, or the answer lost).'),
} as const;
