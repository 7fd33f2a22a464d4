import { actorOf, audited } from '@/lib/audit/log';
import { userDisable } from '@/lib/auth/store';
import { json, readJsonOptional, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { reasonBody, userName } from '@/lib/http/schemas';
import { QueueError } from '@/lib/queue/errors';
import { serverContext } from '@/lib/server/context';

/** POST /api/admin/users/:name/disable {reason?} — the user can no longer sign in; their sessions end at once (admin; audited). */
export const POST = route('admin', async (req: Request, ctx: { params: Promise<{ name: string }> }, who) => {
  const parsed = userName.safeParse((await ctx.params).name);
  if (!parsed.success) throw new QueueError('not_found', 'no such user');
  const name = parsed.data;
  const { reason } = reasonBody.parse(await readJsonOptional(req));
  if (who.kind === 'user' && who.name === name) throw new QueueError('state_forbids', 'an admin cannot disable themself (ask another admin, or use the CLI)');
  const { pool } = serverContext();
  // Not found inside the action: a refused request leaves no audit entry (lib/audit/log.ts).
  await audited(
    pool,
    actorOf(who),
    { action: 'user.disable', target: { user: name }, reason },
    async () => {
      if (!(await userDisable(pool, name))) throw new QueueError('not_found', `no active user ${JSON.stringify(name.slice(0, 64))}`);
    },
    () => ({ changed: 1, skipped: 0 }),
  );
  return json({ ok: true });
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
