import { json, noQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { queueControlDto } from '@/lib/http/dto';
import { queueControls } from '@/lib/queue/ops';
import { serverContext } from '@/lib/server/context';

/** GET /api/queues — the paused or limited queues, with their running jobs against the limits. */
export const GET = route('viewer', async (req: Request) => {
  noQuery(req);
  return json({ queues: (await queueControls(serverContext().readPool)).map(queueControlDto) });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
