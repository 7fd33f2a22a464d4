import { statsDto } from '@/lib/http/dto';
import { json, route } from '@/lib/http/respond';
import { getStats } from '@/lib/queue/read';
import { serverContext } from '@/lib/server/context';

/** GET /api/stats — counts per status and queue, oldest queued age, expired leases, workers alive. */
export const GET = route(async () => json(statsDto(await getStats(serverContext().readPool))));
