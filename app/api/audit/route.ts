import { json, readQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { auditQuery } from '@/lib/http/schemas';
import { readAudit, redactionOf } from '@/lib/server/console-reads';

/** GET /api/audit?actor=&action=&jobId=&cursor=&limit= — operator actions, newest first, keyset pages. */
export const GET = route('viewer', async (req: Request, _ctx, who) => {
  return json(await readAudit(auditQuery.parse(readQuery(req)), redactionOf(who)));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
