import { actorOf, audited } from '@/lib/audit/log';
import { queueControlsChangeDto } from '@/lib/http/dto';
import { json, readJsonOptional, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { controlledQueueName, queueControlsBody } from '@/lib/http/schemas';
import { QueueError } from '@/lib/queue/errors';
import { controlsChangeCounted, queueChangeControls } from '@/lib/queue/ops';
import { serverContext } from '@/lib/server/context';

/**
 * POST /api/queues/:name {paused?, concurrencyLimit?, rateLimit?, ratePeriodMs?, reason?} — pause or
 * resume a queue and set (n) or clear (0) its global limits; every worker honours them at
 * claim time. Answers the queue's controls (`null`: none left, the fast path) and whether they
 * changed (a pause of a paused queue did not). Operator or admin; audited.
 */
export const POST = route('operator', async (req: Request, ctx: { params: Promise<{ name: string }> }, who) => {
  // Next has already decoded the segment once (its route matcher; a malformed escape never
  // reaches here): decoding again would turn "50%off" into an error and "a%41" into "aA".
  const name = controlledQueueName.safeParse((await ctx.params).name);
  if (!name.success) throw new QueueError('invalid_request', `queue name: ${name.error.issues[0]!.message}`);
  const { reason, ...body } = queueControlsBody.parse(await readJsonOptional(req));
  const { pool } = serverContext();
  const action = body.paused === true ? 'queue.pause' : body.paused === false ? 'queue.resume' : 'queue.limits';
  const { controls, changed } = await audited(
    pool,
    actorOf(who),
    { action, target: { queue: name.data }, reason, details: body },
    () => queueChangeControls(pool, { name: name.data, ...body }),
    controlsChangeCounted,
  );
  return json(queueControlsChangeDto(name.data, controls, changed));
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
