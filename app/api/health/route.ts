import { json, route } from '@/lib/http/respond';
import { serverContext } from '@/lib/server/context';

/** GET /api/health — liveness: the process answers. ?ready=1 also checks PostgreSQL. */
export const GET = route(async (req: Request) => {
  if (!new URL(req.url).searchParams.has('ready')) return json({ ok: true });
  const { readPool, doorbell } = serverContext();
  await readPool.query('SELECT 1');
  return json({ ok: true, postgres: 'ok', redis: doorbell.usingRedis ? 'in use' : 'not in use' });
});
