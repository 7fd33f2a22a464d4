import { workerDto } from '@/lib/http/dto';
import { json, route } from '@/lib/http/respond';
import { listWorkers } from '@/lib/queue/read';
import { serverContext } from '@/lib/server/context';

/** GET /api/workers — worker process incarnations, newest heartbeat first. */
export const GET = route(async () => json({ workers: (await listWorkers(serverContext().readPool)).map(workerDto) }));
