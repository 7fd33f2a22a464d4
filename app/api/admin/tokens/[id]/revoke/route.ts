import { actorOf, audited } from '@/lib/audit/log';
import { tokenRevoke } from '@/lib/auth/store';
import { tokenDto } from '@/lib/http/admin-dto';
import { json, readJsonOptional, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { reasonBody, tokenId } from '@/lib/http/schemas';
import { QueueError } from '@/lib/queue/errors';
import { serverContext } from '@/lib/server/context';

/** POST /api/admin/tokens/:id/revoke {reason?} — the token stops working on its next request (admin; audited). */
export const POST = route('admin', async (req: Request, ctx: { params: Promise<{ id: string }> }, who) => {
  const parsed = tokenId.safeParse((await ctx.params).id);
  if (!parsed.success) throw new QueueError('not_found', 'no such token');
  const { reason } = reasonBody.parse(await readJsonOptional(req));
  const { pool } = serverContext();
  // Not found inside the action: a refused request leaves no audit entry (lib/audit/log.ts).
  const revoked = await audited(
    pool,
    actorOf(who),
    { action: 'token.revoke', target: { token: parsed.data }, reason },
    async () => {
      const [token] = await tokenRevoke(pool, parsed.data);
      if (!token) throw new QueueError('not_found', `no live token ${parsed.data}`);
      return token;
    },
    () => ({ changed: 1, skipped: 0 }),
  );
  return json(tokenDto(revoked));
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
