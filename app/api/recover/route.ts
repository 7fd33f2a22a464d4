import { json, readJsonOptional, route } from '@/lib/http/respond';
import { recoverBody } from '@/lib/http/schemas';
import { jobRecover } from '@/lib/queue/ops';
import { serverContext } from '@/lib/server/context';

/** POST /api/recover {dryRun?, ids?} — run (or preview) the recover sweep; returns what it touched. */
export const POST = route(async (req: Request) => {
  const body = recoverBody.parse(await readJsonOptional(req));
  const { pool, doorbell, cfg } = serverContext();
  const report = await jobRecover(pool, {
    dryRun: body.dryRun,
    ids: body.ids,
    doorbell,
    signalGraceMs: cfg.signalGraceMs,
  });
  return json(report);
});
