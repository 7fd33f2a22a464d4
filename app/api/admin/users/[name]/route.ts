import { actorOf, audited } from '@/lib/audit/log';
import { userSetRole } from '@/lib/auth/store';
import { userDto } from '@/lib/http/admin-dto';
import { json, readJson, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { userName, userRoleBody } from '@/lib/http/schemas';
import { QueueError } from '@/lib/queue/errors';
import { serverContext } from '@/lib/server/context';

/**
 * PATCH /api/admin/users/:name {role, reason?} — change a user's role (admin; audited). Their
 * sessions act with the new role from their next request; a demotion revokes the API tokens
 * they made with a scope above it. 409 when it would leave no active admin.
 */
export const PATCH = route('admin', async (req: Request, ctx: { params: Promise<{ name: string }> }, who) => {
  const parsed = userName.safeParse((await ctx.params).name);
  if (!parsed.success) throw new QueueError('not_found', 'no such user');
  const name = parsed.data;
  const body = userRoleBody.parse(await readJson(req, 1024));
  const { pool } = serverContext();
  // Refusals (no such user, the last admin) are thrown inside the action: they leave no entry (lib/audit/log.ts).
  const r = await audited(
    pool,
    actorOf(who),
    { action: 'user.set', target: { user: name }, details: { role: body.role }, reason: body.reason },
    () => userSetRole(pool, name, body.role),
    (c) => ({ changed: c.changed ? 1 : 0, skipped: c.changed ? 0 : 1, details: { from: c.from, revokedTokens: c.revokedTokens } }),
  );
  return json({ ...userDto(r.user), previousRole: r.from, revokedTokens: r.revokedTokens });
});

export const { GET, POST, PUT, DELETE, OPTIONS } = otherMethods('PATCH');
