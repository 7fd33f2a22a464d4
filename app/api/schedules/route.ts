import { json, noQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { scheduleDto } from '@/lib/http/dto';
import { scheduleList } from '@/lib/queue/ops';
import { dbNow } from '@/lib/queue/read';
import { redactValue } from '@/lib/http/redact';
import { redactionOf } from '@/lib/server/console-reads';
import { serverContext } from '@/lib/server/context';

/**
 * GET /api/schedules — the recurring jobs (define them with `npx leasehold schedule add` or
 * in code), and the database clock (the console counts down to each next tick on it).
 */
export const GET = route('viewer', async (req: Request, _ctx, who) => {
  noQuery(req);
  const { readPool } = serverContext();
  const [schedules, now] = await Promise.all([scheduleList(readPool), dbNow(readPool)]);
  const redaction = redactionOf(who);
  return json({ schedules: schedules.map((s) => ({ ...scheduleDto(s), payload: redactValue(s.payload, redaction) })), dbNow: now.toISOString() });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
