/**
 * The operator's actions on one schedule (POST /api/schedules/:name/run|pause|resume): the
 * same ops functions as `leasehold schedule run|pause|resume`, each inside its audit entry
 * (written before the action; a refused one, such as an unknown schedule, leaves none).
 */
import { actorOf, audited, scheduleDefinedDetails, scheduleDefinedOutcome } from '../audit/log';
import { QueueError } from '../queue/errors';
import { scheduleDto } from './dto';
import { knownJobTypes } from '../job-types';
import { json, MAX_ENQUEUE_BODY_BYTES, readJson, readJsonOptional, route } from './respond';
import { reasonBody, scheduleBody, scheduleName, toEnqueueInput, toScheduleInput } from './schemas';
import { scheduleDefine, scheduleDelete, schedulePause, scheduleResume, scheduleRunNow } from '../queue/ops';
import { serverContext } from '../server/context';

type Ctx = { params: Promise<{ name: string }> };

async function nameOf(ctx: Ctx) {
  // Next has already decoded the segment once: decoding again would turn "50%off" into an
  // error and "a%41" into "aA" (as for queue names).
  const name = scheduleName.safeParse((await ctx.params).name);
  if (!name.success) throw new QueueError('invalid_request', `schedule name: ${name.error.issues[0]!.message}`);
  return name.data;
}

async function readRequest(req: Request, ctx: Ctx) {
  const name = await nameOf(ctx);
  const { reason } = reasonBody.parse(await readJsonOptional(req));
  return { name, reason };
}

/**
 * Define or redefine (PUT): 200 with the schedule as it is now. Its type and payload are
 * checked as an enqueue's (the type's registered payload schema included), the cron and the
 * zone by the schedule itself (a name over 200 characters is refused: its ticks could never
 * be enqueued). A paused schedule stays paused, a disabled one disabled; an unchanged cron
 * keeps its next tick. With If-None-Match: *, a name already taken is a 409, not a redefinition.
 */
export const scheduleDefineRoute = () =>
  route('operator', async (req: Request, ctx: Ctx, who) => {
    const name = await nameOf(ctx);
    // If-None-Match: * (the console's New schedule): create only, never redefine one by that name.
    const onlyNew = req.headers.get('if-none-match')?.trim() === '*';
    const { reason, cron, timezone, overlap, ...job } = scheduleBody.parse(await readJson(req, MAX_ENQUEUE_BODY_BYTES));
    const { pool } = serverContext();
    const definition = toScheduleInput(name, cron, timezone, toEnqueueInput(job, '', await knownJobTypes(pool, [job.type])), overlap);
    const { schedule } = await audited(
      pool,
      actorOf(who),
      { action: 'schedule.add', target: { schedule: name }, reason, details: scheduleDefinedDetails(definition) },
      () => scheduleDefine(pool, definition, { onlyNew }),
      // New or redefined: the audit log says which (the action is "add or replace").
      scheduleDefinedOutcome,
    );
    return json({ schedule: scheduleDto(schedule) });
  });

/** Remove (DELETE): 200 {removed}; 404 for no such schedule (and no audit entry). Jobs it enqueued stay. */
export const scheduleRemoveRoute = () =>
  route('operator', async (req: Request, ctx: Ctx, who) => {
    const { name, reason } = await readRequest(req, ctx);
    const { pool } = serverContext();
    await audited(
      pool,
      actorOf(who),
      { action: 'schedule.remove', target: { schedule: name }, reason },
      async () => {
        if (!(await scheduleDelete(pool, name))) throw new QueueError('not_found', `no schedule ${JSON.stringify(name.slice(0, 200))}`);
      },
      () => ({ changed: 1, skipped: 0 }),
    );
    return json({ removed: name });
  });

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
      (r) => ({ changed: r.created ? 1 : 0, skipped: r.created ? 0 : 1, jobIds: [r.id], details: { created: r.created, ...(r.overlapping ? { overlapping: true } : {}) } }),
    );
    return json(r, 202);
  });
