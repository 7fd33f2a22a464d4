import { actorOf, audited } from '@/lib/audit/log';
import { roleAtLeast } from '@/lib/auth/roles';
import { savedViewDto } from '@/lib/http/dto';
import { json, markChangedNothing, readJsonOptional, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { reasonBody, viewId } from '@/lib/http/schemas';
import { QueueError } from '@/lib/queue/errors';
import { viewDelete } from '@/lib/views/store';
import { serverContext } from '@/lib/server/context';

/** DELETE /api/views/:id {reason?} — delete a saved view: its creator or an admin (audited). 200 with the view as it was. */
export const DELETE = route('operator', async (req: Request, ctx: { params: Promise<{ id: string }> }, who) => {
  // A view is no job's state: the console's shared reads and stats stay cached.
  markChangedNothing(req);
  const parsed = viewId.safeParse((await ctx.params).id);
  if (!parsed.success) throw new QueueError('not_found', 'no such saved view');
  const { reason } = reasonBody.parse(await readJsonOptional(req));
  const { pool } = serverContext();
  // Refused inside the action (no such view, someone else's): a refused request leaves no audit entry.
  const view = await audited(
    pool,
    actorOf(who),
    { action: 'view.delete', target: { id: parsed.data }, reason },
    () => viewDelete(pool, parsed.data, { userId: who.userId ?? null, tokenId: who.tokenId ?? null, admin: roleAtLeast(who.role, 'admin') }),
    (v) => ({ changed: 1, skipped: 0, target: { view: v.name, page: v.page, id: v.id }, details: { query: v.query } }),
  );
  return json(savedViewDto(view, who));
});

export const { GET, POST, PUT, PATCH, OPTIONS } = otherMethods('DELETE');
