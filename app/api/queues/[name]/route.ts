import { queueControlDto } from '@/lib/http/dto';
import { json, readJsonOptional, route } from '@/lib/http/respond';
import { queueControlsBody, queueName } from '@/lib/http/schemas';
import { QueueError } from '@/lib/queue/errors';
import { queueSetControls } from '@/lib/queue/ops';
import { serverContext } from '@/lib/server/context';

/**
 * POST /api/queues/:name {paused?, concurrencyLimit?, rateLimit?, ratePeriodMs?} — pause or
 * resume a queue and set (n) or clear (0) its global limits; every worker honours them at
 * claim time. Answers the queue's controls (`null`: none left, the fast path).
 */
export const POST = route(async (req: Request, ctx: { params: Promise<{ name: string }> }) => {
  const raw = decodeURIComponent((await ctx.params).name);
  const name = queueName.safeParse(raw);
  if (!name.success) throw new QueueError('invalid_request', `queue name: ${name.error.issues[0]!.message}`);
  const body = queueControlsBody.parse(await readJsonOptional(req));
  const controls = await queueSetControls(serverContext().pool, { name: name.data, ...body });
  return json({ queue: name.data, controls: controls ? queueControlDto(controls) : null });
});
