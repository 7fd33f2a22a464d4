/**
 * The operator's actions on one schedule (POST /api/schedules/:name/run|pause|resume): the
 * same ops functions as `leasehold schedule run|pause|resume`, each inside its audit entry
 * (written before the action; a refused one, such as an unknown schedule, leaves none).
 */
import { actorOf, audited } from '../audit/log';
import { QueueError } from '../queue/errors';
import { scheduleDto } from './dto';
import { json, readJsonOptional, route } from './respond';
import { scheduleActionBody, scheduleName } from './schemas';
import { schedulePause, scheduleResume, scheduleRunNow } from '../queue/ops';
import { serverContext } from '../server/context';

type Ctx = { params: Promise<{ name: string }> };

async function readRequest(req: Request, ctx: Ctx) {
  // Next has already decoded the segment once: decoding again would turn "50%off" into an
  // error and "a%41" into "aA" (as for queue names).
  const name = scheduleName.safeParse((await ctx.params).name);
  if (!name.success) throw new QueueError('invalid_request', `schedule name: ${name.error.issues[0]!.message}`);
  const { reason } = scheduleActionBody.parse(await readJsonOptional(req));
  return { name: name.data, reason };
}

/**
 * Pause or resume: 200 with the schedule as it is now and whether it changed. Pausing a
 * paused schedule (or resuming a running one) is not refused — it already is what was asked
 * for, as with a queue's pause — and is logged as skipped.
 */
export const scheduleControlRoute = (verb: 'pause' | 'resume') =>
  route('operator', async (req: Request, ctx: Ctx, who) => {
    const { name, reason } = await readRequest(req, ctx);
    const { pool } = serverContext();
    const r = await audited(
      pool,
      actorOf(who),
      { action: `schedule.${verb}`, target: { schedule: name }, reason },
      () => (verb === 'pause' ? schedulePause(pool, name) : scheduleResume(pool, name)),
      (r) => ({ changed: r.changed ? 1 : 0, skipped: r.changed ? 0 : 1 }),
    );
    return json({ schedule: scheduleDto(r.schedule), changed: r.changed });
  });

/**
 * Run now: 202 with the job it enqueued (as POST /api/jobs answers), or, for a repeat within
 * a second or so, the job the first one made (`created: false`). The job is on the audit
 * entry, so the entry shows on that job's timeline.
 */
export const scheduleRunRoute = () =>
  route('operator', async (req: Request, ctx: Ctx, who) => {
    const { name, reason } = await readRequest(req, ctx);
    const { pool, doorbell } = serverContext();
    const r = await audited(
      pool,
      actorOf(who),
      { action: 'schedule.run', target: { schedule: name }, reason },
      () => scheduleRunNow(pool, { name, doorbell }),
      (r) => ({ changed: r.created ? 1 : 0, skipped: r.created ? 0 : 1, jobIds: [r.id], details: { created: r.created } }),
    );
    return json(r, 202);
  });
