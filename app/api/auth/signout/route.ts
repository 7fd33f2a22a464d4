import { clearedSessionCookie } from '@/lib/auth/cookies';
import { cookieValue, SESSION_COOKIE } from '@/lib/auth/gate';
import { sessionEnd } from '@/lib/auth/store';
import { json, readJsonOptional, route } from '@/lib/http/respond';
import { emptyBody } from '@/lib/http/schemas';
import { otherMethods } from '@/lib/http/unrouted';
import { serverContext } from '@/lib/server/context';

/** POST /api/auth/signout — ends the session on the server (its row is deleted) and clears the cookie. */
export const POST = route('public', async (req: Request) => {
  emptyBody.parse(await readJsonOptional(req));
  const sid = cookieValue(req, SESSION_COOKIE);
  if (sid) await sessionEnd(serverContext().pool, sid);
  return json({ ok: true }, 200, { 'set-cookie': clearedSessionCookie(req) });
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
