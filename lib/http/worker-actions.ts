/**
 * Quiet or resume one worker process (POST /api/workers/:id/quiet|resume): the same ops
 * function as the console's buttons, inside its audit entry (written before the action; a
 * refused one, an unknown or stopped worker, leaves none).
 */
import { actorOf, auditedWorkerQuiet } from '../audit/log';
import { QueueError } from '../queue/errors';
import { serverContext } from '../server/context';
import { json, readJsonOptional, route } from './respond';
import { reasonBody, workerIdParam } from './schemas';

type Ctx = { params: Promise<{ id: string }> };

/**
 * 200 with whether it changed. Quieting a quiet worker (or resuming one that claims) is not
 * refused — it already is what was asked for — and is logged as skipped.
 */
export const workerQuietRoute = (verb: 'quiet' | 'resume') =>
  route('operator', async (req: Request, ctx: Ctx, who) => {
    const id = workerIdParam.safeParse((await ctx.params).id);
    if (!id.success) throw new QueueError('invalid_request', `worker id: ${id.error.issues[0]!.message}`);
    const { reason } = reasonBody.parse(await readJsonOptional(req));
    const { pool } = serverContext();
    const r = await auditedWorkerQuiet(pool, actorOf(who), { workerId: id.data, quiet: verb === 'quiet', reason });
    return json({ workerId: id.data, quiet: verb === 'quiet', changed: r.changed });
  });
