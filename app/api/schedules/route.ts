import { json, route } from '@/lib/http/respond';
import { scheduleDto } from '@/lib/http/dto';
import { scheduleList } from '@/lib/queue/ops';
import { serverContext } from '@/lib/server/context';

/** GET /api/schedules — the recurring jobs (define them with `npx leasehold schedule add` or in code). */
export const GET = route('viewer', async () => json({ schedules: (await scheduleList(serverContext().readPool)).map(scheduleDto) }));
