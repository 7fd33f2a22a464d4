import { authOff } from '@/lib/auth/gate';
import { json, noQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';

/** GET /api/auth/me — who is signed in, with their role (401 when nobody is); `authOff` when LEASEHOLD_AUTH=off. */
export const GET = route('viewer', async (req: Request, _ctx: unknown, who) => {
  noQuery(req);
  return json({ name: who.name, kind: who.kind, role: who.role, authOff: authOff() });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
