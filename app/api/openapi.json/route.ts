import { openApiDocument } from '@/lib/http/openapi/document';
import { json, noQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';

/** GET /api/openapi.json — the OpenAPI 3.1 document of this API (generated from its zod schemas). */
export const GET = route('public', async (req: Request) => {
  noQuery(req);
  return json(openApiDocument());
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
