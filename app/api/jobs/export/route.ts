import { json, readListQuery, route } from '@/lib/http/respond';
import { checkFilterRedaction } from '@/lib/http/redact';
import { exportQuery } from '@/lib/http/schemas';
import { otherMethods } from '@/lib/http/unrouted';
import { redactionOf } from '@/lib/server/console-reads';
import { serverContext } from '@/lib/server/context';
import { exportJobs, exportRefusal } from '@/lib/server/job-export';
import { liveOwner } from '@/lib/server/live';

const CONTENT_TYPE = { csv: 'text/csv; charset=utf-8', ndjson: 'application/x-ndjson; charset=utf-8' } as const;

/**
 * GET /api/jobs/export?<filters>&format=csv|ndjson&max=N — every job matching the list's
 * filters, in the list's order, as a download (lib/server/job-export.ts); a viewer's copy
 * redacted as the list is. A parameter given empty filters nothing, as on the list.
 */
export const GET = route('viewer', async (req: Request, _ctx, who) => {
  const { format, max, ...filter } = exportQuery.parse(readListQuery(req, Object.keys(exportQuery.shape)));
  const redaction = redactionOf(who);
  checkFilterRedaction(filter, redaction);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const headers = {
    'content-type': CONTENT_TYPE[format],
    'content-disposition': `attachment; filename="jobs-${filter.status ?? 'all'}-${stamp}.${format === 'csv' ? 'csv' : 'ndjson'}"`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  };
  // A HEAD (Next serves it with GET) gets the headers only: an export no one reads would
  // read the database for nothing, and hold one of the viewer's places.
  if (req.method === 'HEAD') return new Response(null, { headers });
  const owner = liveOwner(who);
  const busy = exportRefusal(owner);
  if (busy) return json(busy.error.toJSON(), busy.error.httpStatus, { 'retry-after': String(busy.retryAfterS) });
  const { readPool } = serverContext();
  const body = await exportJobs(readPool, filter, { format, max, redaction, owner, request: req });
  return new Response(body, { headers });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
