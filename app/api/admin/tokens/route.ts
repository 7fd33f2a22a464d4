import { actorOf, audited } from '@/lib/audit/log';
import { tokenCreate, tokenList } from '@/lib/auth/store';
import { tokenDto } from '@/lib/http/admin-dto';
import { json, noQuery, readJson, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { tokenBody } from '@/lib/http/schemas';
import { serverContext } from '@/lib/server/context';

/** GET /api/admin/tokens — the API tokens, never their secrets (admin). */
export const GET = route('admin', async (req: Request) => {
  noQuery(req);
  return json({ tokens: (await tokenList(serverContext().readPool)).map(tokenDto) });
});

/** POST /api/admin/tokens {name, scope} — a new token; its secret is in this answer only (admin; audited). */
export const POST = route('admin', async (req: Request, _ctx: unknown, who) => {
  const body = tokenBody.parse(await readJson(req, 4096));
  const { pool } = serverContext();
  const { token, info } = await audited(
    pool,
    actorOf(who),
    { action: 'token.create', target: { name: body.name }, details: { scope: body.scope } },
    () => tokenCreate(pool, { ...body, createdBy: `${who.name} (${who.kind})`, maker: { userId: who.userId, tokenId: who.tokenId } }),
    (made) => ({ changed: 1, skipped: 0, target: { token: made.info.id, name: made.info.name } }),
  );
  return json({ ...tokenDto(info), token }, 201);
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET', 'POST');
