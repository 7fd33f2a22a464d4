import { actorOf, audited } from '@/lib/audit/log';
import { savedViewDto } from '@/lib/http/dto';
import { redactViewQuery } from '@/lib/http/redact';
import { json, markChangedNothing, readJson, readQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { viewBody, viewsQuery } from '@/lib/http/schemas';
import { viewList, viewSave } from '@/lib/views/store';
import { redactionOf } from '@/lib/server/console-reads';
import { serverContext } from '@/lib/server/context';

/**
 * GET /api/views?page=jobs|dead-letter — the saved views, shared by everyone who signs in
 * (viewer); a viewer reads a payload filter on a hidden key without its value (LEASEHOLD_REDACT_KEYS).
 */
export const GET = route('viewer', async (req: Request, _ctx, who) => {
  const { page } = viewsQuery.parse(readQuery(req));
  const views = await viewList(serverContext().readPool, page);
  const redaction = redactionOf(who);
  return json({ views: views.map((v) => savedViewDto({ ...v, query: redactViewQuery(v.query, redaction) }, who)) });
});

/**
 * POST /api/views {name, page, query} — save the page's filters under a name everyone sees
 * (operator or admin; audited, as changes to users and tokens are). 409 for a name the page
 * has (whatever its case) or a page at its cap.
 */
export const POST = route('operator', async (req: Request, _ctx, who) => {
  // A view is no job's state: the console's shared reads and stats stay cached.
  markChangedNothing(req);
  const body = viewBody.parse(await readJson(req, 8 * 1024));
  const { pool } = serverContext();
  const view = await audited(
    pool,
    actorOf(who),
    { action: 'view.save', target: { view: body.name, page: body.page }, details: { query: body.query } },
    () => viewSave(pool, { ...body, createdBy: who.userId ?? null, createdByToken: who.tokenId ?? null }),
    (v) => ({ changed: 1, skipped: 0, target: { view: v.name, page: v.page, id: v.id } }),
  );
  return json(savedViewDto(view, who), 201);
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET', 'POST');
