import { deadLetterDto } from '@/lib/http/dto';
import { json, route } from '@/lib/http/respond';
import { deadLetterGroups } from '@/lib/queue/dead-letter';
import { memo } from '@/lib/server/memo';
import { serverContext } from '@/lib/server/context';

/** GET /api/dead-letter — failed jobs grouped by type and error fingerprint (shared by all viewers, at most every 3 s). */
export const GET = route('viewer', async () => {
  const d = await memo('dead-letter', 3_000, () => deadLetterGroups(serverContext().readPool));
  return json(deadLetterDto(d));
});
