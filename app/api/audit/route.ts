import { auditList } from '@/lib/audit/log';
import { json, route } from '@/lib/http/respond';
import { auditQuery } from '@/lib/http/schemas';
import { serverContext } from '@/lib/server/context';

/** GET /api/audit?actor=&action=&jobId=&cursor=&limit= — operator actions, newest first, keyset pages. */
export const GET = route('viewer', async (req: Request) => {
  const q = auditQuery.parse(Object.fromEntries(new URL(req.url).searchParams));
  const page = await auditList(serverContext().readPool, q);
  return json({
    entries: page.entries.map((e) => ({ ...e, at: e.at.toISOString() })),
    nextCursor: page.nextCursor,
  });
});
