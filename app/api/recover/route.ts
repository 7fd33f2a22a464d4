import { actorOf, auditRecord } from '@/lib/audit/log';
import { json, readJsonOptional, route } from '@/lib/http/respond';
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
  const report = await jobRecover(pool, {
    dryRun: body.dryRun,
    ids: body.ids,
    doorbell,
    signalGraceMs: cfg.signalGraceMs,
  });
  if (!body.dryRun) {
    await auditRecord(pool, {
      ...actorOf(who),
      action: 'recover',
      target: body.ids ? { ids: body.ids } : { all: true },
      jobIds: [...report.expired.map((e) => e.id), ...report.resignalled.map((r) => r.id)],
      changed: report.expired.length,
      skipped: body.ids ? Math.max(0, body.ids.length - report.expired.length) : 0,
      reason: body.reason,
      details: { resignalled: report.resignalled.length },
    });
  }
  return json(report);
});
