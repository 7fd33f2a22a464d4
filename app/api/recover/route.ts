import { actorOf, audited } from '@/lib/audit/log';
import { json, markChangedNothing, readJsonOptional, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { recoverBody } from '@/lib/http/schemas';
import { jobRecover } from '@/lib/queue/ops';
import { serverContext } from '@/lib/server/context';

/**
 * POST /api/recover {dryRun?, ids?, reason?} — run (or preview) the recover sweep; returns
 * what it touched. Operator or admin; a run (not a dry run) is audited.
 */
export const POST = route('operator', async (req: Request, _ctx: unknown, who) => {
  const body = recoverBody.parse(await readJsonOptional(req));
  const { pool, doorbell, cfg } = serverContext();
  const run = () => jobRecover(pool, { dryRun: body.dryRun, ids: body.ids, doorbell, signalGraceMs: cfg.signalGraceMs });
  if (body.dryRun) {
    markChangedNothing(req);
    return json(await run());
  }
  const report = await audited(
    pool,
    actorOf(who),
    { action: 'recover', target: body.ids ? { ids: body.ids } : { all: true }, jobIds: body.ids, reason: body.reason },
    run,
    (r) => ({
      jobIds: [...r.expired.map((e) => e.id), ...r.resignalled.map((x) => x.id)],
      changed: r.expired.length,
      skipped: body.ids ? Math.max(0, body.ids.length - r.expired.length) : 0,
      details: { resignalled: r.resignalled.length },
    }),
  );
  return json(report);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
