import { actorOf, audited } from '@/lib/audit/log';
import { roleAtLeast } from '@/lib/auth/roles';
import { json, markReadOnly, readJson, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { actionBody, actionName } from '@/lib/http/schemas';
import { applyAction, type BulkTarget, previewAction, resolveTarget } from '@/lib/queue/bulk';
import { QueueError } from '@/lib/queue/errors';
import { serverContext } from '@/lib/server/context';

/**
 * POST /api/actions/{requeue|cancel|delete|recover}
 *   {ids | filter | all, preview?, resetAttempts?, revokeLease?, seen?, expectIds?, reason?}
 * With `preview: true`: what the action would touch (count, per status, the first items
 * with what would happen to each). Without: the action, batch by batch through the same
 * lib/queue/ops functions the worker uses, and a per-item report (skips with reasons).
 * Operator or admin (delete: admin only); every applied action leaves one audit entry.
 */
export const POST = route('operator', async (req: Request, ctx: { params: Promise<{ action: string }> }, who) => {
  const parsed = actionName.safeParse((await ctx.params).action);
  if (!parsed.success) throw new QueueError('not_found', 'no such action: use requeue, cancel, delete or recover');
  const action = parsed.data;
  if (action === 'delete' && !roleAtLeast(who.role, 'admin')) throw new QueueError('forbidden', `${who.name} may not delete jobs: it needs the admin role`);
  const body = actionBody.parse(await readJson(req, 256 * 1024));
  if (body.all && action !== 'recover') throw new QueueError('invalid_request', 'all: only recover acts on everything (its sweep); give ids or a filter');
  if (body.seen && action === 'recover') throw new QueueError('invalid_request', 'seen: not for recover, which moves only leases that have expired when it runs');
  // Options of another action are refused rather than ignored (and recorded in the audit log
  // as if they had applied). The console sends both as false with every action.
  if (action !== 'requeue' && (body.resetAttempts || body.revokeLease)) {
    throw new QueueError('invalid_request', `${body.resetAttempts ? 'resetAttempts' : 'revokeLease'}: only requeue takes it`);
  }
  if (body.expectIds && !body.all) throw new QueueError('invalid_request', "expectIds: only with all (a recover's preview, checked against what the sweep moves)");
  const seen = body.seen ? new Map(Object.entries(body.seen)) : undefined;
  const target: BulkTarget = body.ids ? { ids: body.ids, seen } : body.filter ? { filter: body.filter } : { all: true };
  const { pool, readPool, doorbell, cfg, results } = serverContext();
  const opts = action === 'requeue' ? { resetAttempts: body.resetAttempts, revokeLease: body.revokeLease } : {};
  const extra = { doorbell, signalGraceMs: cfg.signalGraceMs, aliveWithinMs: cfg.leaseMs, expectIds: body.expectIds, results };
  if (body.preview) {
    markReadOnly(req);
    return json(await previewAction(readPool, action, target, opts, extra));
  }
  const resolved = await resolveTarget(readPool, target); // a filter over the cap is refused here, before the audit entry
  const report = await audited(
    pool,
    actorOf(who),
    // One job by id is that job's action (as POST /api/jobs/:id/requeue records it): its own
    // page's buttons come here too, and "bulk.requeue" for one job misread its history.
    { action: body.ids?.length === 1 ? action : `bulk.${action}`, target: body.ids ? { ids: body.ids } : body.filter ? { filter: body.filter } : { all: true }, jobIds: body.ids, reason: body.reason, details: opts },
    () => applyAction(pool, readPool, action, resolved, opts, extra),
    (r) => ({
      ...(body.filter ? { target: { filter: body.filter, maxId: r.maxId } } : {}),
      // Every id a filter matched, or the sweep moved (the report's items stop at 1,000): each job's timeline shows the action.
      ...(body.ids ? {} : { jobIds: 'ids' in resolved ? resolved.ids : (r.movedIds ?? r.items.map((i) => i.id)) }),
      changed: r.changed,
      skipped: r.skipped,
      details: {
        total: r.total,
        byOutcome: r.byOutcome,
        itemsTruncated: r.itemsTruncated,
        reasons: r.reasons.slice(0, 5),
        // A recover also rings due jobs whose wake-up was missing: how many, and the first ones.
        ...(r.resignalTotal ? { resignalled: r.resignalTotal, resignalledIds: (r.resignal ?? []).slice(0, 20).map((x) => x.id) } : {}),
      },
    }),
  );
  const { movedIds: _forTheAuditEntry, ...sent } = report;
  return json(sent);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
