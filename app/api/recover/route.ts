import { actorOf, audited } from '@/lib/audit/log';
import { json, markReadOnly, readJsonOptional, route } from '@/lib/http/respond';
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
  const run = () => jobRecover(pool, { dryRun: body.dryRun, ids: body.ids, doorbell, signalGraceMs: cfg.signalGraceMs, aliveWithinMs: cfg.leaseMs });
  if (body.dryRun) {
    markReadOnly(req);
    return json(await run());
  }
  const ids = body.ids ? [...new Set(body.ids)] : undefined;
  const report = await audited(
    pool,
    actorOf(who),
    { action: 'recover', target: ids ? { ids } : { all: true }, jobIds: ids, reason: body.reason },
    run,
    (r) => ({
      // Given ids: all of them, moved or skipped (each one's timeline shows the attempt);
      // the whole sweep: the jobs it moved or rang again.
      jobIds: ids ?? [...r.expired.map((e) => e.id), ...r.resignalled.map((x) => x.id)],
      changed: r.expired.length,
      skipped: ids ? Math.max(0, ids.length - r.expired.length) : 0,
      details: { resignalled: r.resignalled.length },
    }),
  );
  return json(report);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
