import { actorOf, audited } from '@/lib/audit/log';
import { userAdd, userList } from '@/lib/auth/store';
import { userDto } from '@/lib/http/admin-dto';
import { json, noQuery, readJson, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { userBody } from '@/lib/http/schemas';
import { serverContext } from '@/lib/server/context';

/** GET /api/admin/users — the operators and their roles (admin). */
export const GET = route('admin', async (req: Request) => {
  noQuery(req);
  return json({ users: (await userList(serverContext().readPool)).map(userDto) });
});

/** POST /api/admin/users {name, role, password} — add an operator (admin; audited). 409 when the name is taken. */
export const POST = route('admin', async (req: Request, _ctx: unknown, who) => {
  const body = userBody.parse(await readJson(req, 4096));
  const { pool } = serverContext();
  const user = await audited(pool, actorOf(who), { action: 'user.add', target: { user: body.name }, details: { role: body.role } }, () => userAdd(pool, body), (u) => ({
    changed: 1,
    skipped: 0,
    target: { user: u.name },
  }));
  return json(userDto(user), 201);
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET', 'POST');
