import { createHash } from 'node:crypto';
import type pg from 'pg';
import { type Executor, useConnection, useTransaction } from '../../db/client';
import { log } from '../../log';
import { nextTick, nextTickAfter } from '../cron';
import { QueueError } from '../errors';
import { compareJobIds, DEFAULT_PRIORITY, PRIORITY_LEVELS, QUEUE_NAME_COMMA, SCHEDULE_CRON_MAX, SCHEDULE_NAME_MAX, SCHEDULE_OVERLAPS, SCHEDULE_RUN_KEY_PREFIX, SCHEDULE_TICK_KEY_PREFIX, SCHEDULE_TIMEZONE_MAX, type ScheduleOverlap } from '../job';
import type { Doorbell, Ring } from '../signal';
import * as sql from '../statements';
import { storableText } from '../text';
import { KEY_FREED_TRIES, run } from './internal';
import { DEFAULT_QUEUE, type EnqueueResult, jobEnqueue } from './enqueue';

export interface ScheduleInput {
  name: string;
  /** Five fields, or six with seconds first ("* * * * * *" = every second). */
  cron: string;
  timezone?: string;
  queue?: string;
  type: string;
  payload?: unknown;
  maxAttempts?: number;
  /** The priority of the jobs it enqueues (0, the default, runs first; see job.ts PRIORITY_LEVELS). */
  priority?: number;
  enabled?: boolean;
  /**
   * 'allow' (the default): every tick enqueues a job. 'skip': no second run while one is
   * unfinished — its jobs hold the singleton key scheduleSingletonKey(name), and a tick that
   * meets a run of it still queued, retrying or running is skipped (a Run now returns that run).
   * Left out of a redefinition, it stays what it was (as `enabled`); it applies to the runs
   * made from then on (a run made before a switch to 'skip' holds no key).
   */
  overlap?: ScheduleOverlap;
}

export interface Schedule extends Required<Omit<ScheduleInput, 'payload'>> {
  payload: unknown;
  nextRunAt: Date;
  lastRunAt: Date | null;
  lastJobId: string | null;
  /** Why the due tick could not be enqueued (it is retried); null once a tick goes through. */
  lastError: string | null;
  lastErrorAt: Date | null;
  /** Paused by an operator (no tick is enqueued until a resume); not part of the definition. */
  paused: boolean;
  pausedAt: Date | null;
  /** The last tick skipped because a run was unfinished (overlap 'skip'), and that run's job. */
  lastSkippedAt: Date | null;
  lastSkippedJobId: string | null;
}

const toSchedule = (r: any): Schedule => ({
  name: r.name,
  cron: r.cron,
  timezone: r.timezone,
  queue: r.queue,
  type: r.type,
  payload: r.payload,
  maxAttempts: r.max_attempts,
  priority: r.priority,
  enabled: r.enabled,
  nextRunAt: r.next_run_at,
  lastRunAt: r.last_run_at,
  lastJobId: r.last_job_id === null ? null : String(r.last_job_id),
  lastError: r.last_error,
  lastErrorAt: r.last_error_at,
  paused: r.paused_at !== null,
  pausedAt: r.paused_at,
  overlap: r.overlap,
  lastSkippedAt: r.last_skipped_at,
  lastSkippedJobId: r.last_skipped_job_id === null ? null : String(r.last_skipped_job_id),
});

/**
 * scheduleUpsert — define or redefine a recurring job (its first tick follows the database
 * clock). `enabled` left out: a new one is, a redefined one keeps what it was. `onlyNew`: a
 * name already taken is refused (409), not redefined (the console's New schedule).
 */
export async function scheduleUpsert(db: Executor, s: ScheduleInput, opts: { onlyNew?: boolean } = {}): Promise<Schedule> {
  return (await scheduleDefine(db, s, opts)).schedule;
}

/** What a redefinition changed: each field of the definition it replaced that differs, as it was. */
export type ScheduleChanges = Partial<Pick<Schedule, 'cron' | 'timezone' | 'queue' | 'type' | 'priority' | 'maxAttempts' | 'overlap'>>;

/**
 * scheduleUpsert, saying whether the schedule is new (`created`) or a redefinition, and then
 * what it changed (`changedFrom`, and `payloadChanged`): the audit log tells them apart and
 * shows the old values (of the payload only that it changed: it may be large, or hold secrets).
 */
export async function scheduleDefine(
  db: Executor,
  s: ScheduleInput,
  opts: { onlyNew?: boolean } = {},
): Promise<{ schedule: Schedule; created: boolean; changedFrom: ScheduleChanges; payloadChanged: boolean }> {
  // Refused here, where it is defined, rather than by the jobs table at every tick: the
  // tick's job would break a constraint (its idempotency key is `schedule:<name>:<tick>`,
  // at most 255 characters), and the schedule would never run.
  const problem = scheduleProblem(s);
  if (problem) throw new QueueError('invalid_request', `schedule ${JSON.stringify(s.name.slice(0, 80))}: ${problem}`);
  const { rows: [{ now }] } = await run(db, sql.dbClock, []);
  const tz = s.timezone ?? 'UTC';
  const first = nextTick(s.cron, tz, now, s.name);
  const { rows } = await run(db, opts.onlyNew ? sql.scheduleCreate : sql.scheduleUpsert, [
    s.name, s.cron, tz, s.queue ?? DEFAULT_QUEUE, s.type, JSON.stringify(s.payload ?? {}), s.maxAttempts ?? null, first, s.enabled ?? null,
    s.priority ?? DEFAULT_PRIORITY, s.overlap ?? null,
  ]);
  if (!rows[0]) throw new QueueError('state_forbids', `a schedule named ${JSON.stringify(s.name.slice(0, 200))} exists already: edit it, or choose another name`);
  const schedule = toSchedule(rows[0]);
  const was = (rows[0].previous ?? {}) as Record<string, unknown>;
  const changedFrom: ScheduleChanges = {};
  if (rows[0].created !== true) {
    for (const k of ['cron', 'timezone', 'queue', 'type', 'priority', 'maxAttempts', 'overlap'] as const) {
      if (k in was && was[k] !== schedule[k]) (changedFrom as Record<string, unknown>)[k] = was[k];
    }
  }
  return { schedule, created: rows[0].created === true, changedFrom, payloadChanged: rows[0].created !== true && was.payloadChanged === true };
}

function scheduleProblem(s: ScheduleInput): string | null {
  const text = (v: string | undefined, what: string) => (v !== undefined && (v.length < 1 || v.length > 200) ? `${what} must have 1 to 200 characters` : null);
  if (s.name.length < 1 || s.name.length > SCHEDULE_NAME_MAX) return `the name must have 1 to ${SCHEDULE_NAME_MAX} characters`;
  // " nightly" would list as "nightly", and `schedule remove nightly` would not find it.
  if (s.name.trim() !== s.name) return 'the name must not start or end with whitespace';
  // A URL path cannot carry them (/api/schedules/../pause is /api/pause): the console and the
  // API could not pause, run, edit or remove it, and it would tick for good.
  if (s.name === '.' || s.name === '..') return 'the name must not be "." or ".." (a URL path cannot name them)';
  // As the API holds them: a definition the console's dialog could not save back unchanged.
  if (s.cron.length > SCHEDULE_CRON_MAX) return `the cron expression must have at most ${SCHEDULE_CRON_MAX} characters`;
  if (s.timezone !== undefined && s.timezone.length > SCHEDULE_TIMEZONE_MAX) return `the time zone must have at most ${SCHEDULE_TIMEZONE_MAX} characters`;
  if (s.maxAttempts !== undefined && !(Number.isInteger(s.maxAttempts) && s.maxAttempts >= 1)) return 'maxAttempts must be a whole number of at least 1';
  if (s.priority !== undefined && !(Number.isInteger(s.priority) && s.priority >= 0 && s.priority < PRIORITY_LEVELS)) {
    return `priority must be a whole number from 0 to ${PRIORITY_LEVELS - 1}`;
  }
  if (s.overlap !== undefined && !SCHEDULE_OVERLAPS.includes(s.overlap)) return `overlap must be one of ${SCHEDULE_OVERLAPS.join(', ')}`;
  if (s.queue?.includes(',')) return `the queue ${QUEUE_NAME_COMMA}`;
  return text(s.queue, 'the queue') ?? text(s.type, 'the type');
}

export async function scheduleDelete(db: Executor, name: string): Promise<boolean> {
  return ((await run(db, sql.scheduleDelete, [name])).rowCount ?? 0) > 0;
}

export async function scheduleList(db: Executor): Promise<Schedule[]> {
  return (await run(db, sql.scheduleList, [])).rows.map(toSchedule);
}

/** What an operator's pause or resume did: the schedule as it is now, and whether it changed (false: it already was). */
export interface ScheduleChange {
  schedule: Schedule;
  changed: boolean;
}

const noSchedule = (name: string) => new QueueError('not_found', `no schedule ${JSON.stringify(name.slice(0, 200))}`);

/** The schedule's row, with the database clock; not_found when there is none. */
async function scheduleRow(db: Executor, name: string) {
  const row = (await run(db, sql.scheduleGet, [name])).rows[0];
  if (!row) throw noSchedule(name);
  return row;
}

/**
 * schedulePause — stop a schedule's ticks until it is resumed (an operator's; the definition's
 * `enabled` is left alone). Pausing a paused schedule changes nothing and says so
 * (`changed: false`), as a queue's pause does. not_found for no such schedule.
 */
export async function schedulePause(db: Executor, name: string): Promise<ScheduleChange> {
  const { rows } = await run(db, sql.schedulePause, [name]);
  if (rows[0]) return { schedule: toSchedule(rows[0]), changed: true };
  return { schedule: toSchedule(await scheduleRow(db, name)), changed: false };
}

/**
 * scheduleResume — let a paused schedule tick again, from its next tick after now (database
 * clock): the ticks it missed while paused are not owed, so a resume never makes a burst of
 * runs. Resuming a running schedule changes nothing (`changed: false`).
 */
export async function scheduleResume(db: Executor, name: string): Promise<ScheduleChange> {
  // The next tick is computed here (cron-parser), then swapped in on the cron it was computed
  // from: a redefinition landing in between makes the statement refuse, and it is read again.
  for (let k = 0; k < 3; k++) {
    const row = await scheduleRow(db, name);
    if (row.paused_at === null) return { schedule: toSchedule(row), changed: false };
    // The series from the first tick it did not run (a redefinition while paused moved it
    // onto the new cron's), past now: see nextTickAfter for why not simply from now.
    const next = nextTickAfter(row.cron, row.timezone, row.next_run_at, row.db_now, row.name);
    const { rows } = await run(db, sql.scheduleResume, [name, next, row.cron, row.timezone]);
    if (rows[0]) return { schedule: toSchedule(rows[0]), changed: true };
  }
  throw new QueueError('unavailable', `schedule ${JSON.stringify(name.slice(0, 200))} kept changing while it was resumed: try again`);
}

/**
 * The idempotency key of a run-now: `schedule-run:<name>:<second>` (database clock, UTC). Its
 * prefix is not `schedule:`, so no schedule's name can make it equal a tick's key
 * (`schedule:<name>:<tick>`), whatever colons the name holds.
 */
export const runNowKey = (name: string, second: number) => `${SCHEDULE_RUN_KEY_PREFIX}${scheduleKeyName(name)}:${new Date(second * 1000).toISOString().replace('.000Z', 'Z')}`;
/** The idempotency key of a tick's job: `schedule:<name>:<tick>`. */
export const scheduleTickKey = (name: string, tick: Date) => `${SCHEDULE_TICK_KEY_PREFIX}${scheduleKeyName(name)}:${tick.toISOString()}`;
const SCHEDULE_KEY_NAME_MAX = 200;
/**
 * A schedule's name as its jobs' keys carry it (ticks, run-nows, the singleton key): itself, or
 * for a name too long for a key's 255 characters (one made by hand), `#` and its SHA-256.
 */
const scheduleKeyName = (name: string) => (name.length <= SCHEDULE_KEY_NAME_MAX ? name : `#${createHash('sha256').update(name).digest('hex')}`);

/**
 * The singleton key the jobs of a schedule that skips overlapping runs hold (ticks and Run now
 * alike): `schedule:<name>` (a name too long for 255 characters, one made by hand, by its hash).
 * A job enqueued by hand with it counts as a run of the schedule too.
 */
export const scheduleSingletonKey = (name: string) => `schedule:${scheduleKeyName(name)}`;

/**
 * What a run-now made: the job, and whether it is new (false: a run-now a moment before made
 * it, or, with `overlapping`, it is the schedule's run still unfinished: overlap 'skip').
 */
export interface ScheduleRun extends Omit<EnqueueResult, 'heldBy'> {
  schedule: string;
  overlapping?: true;
}

/**
 * scheduleRunNow — enqueue the job a schedule's ticks make, due now, leaving the schedule's
 * next tick where it is (paused or disabled schedules too: an operator may run one by hand).
 *
 * A double click, two operators pressing at once, or a request retried by a proxy must not
 * run the job twice, but a second run asked for deliberately a few seconds later must run:
 * a run-now within the same or the next second (database clock) of the last one returns that
 * one's job (`created: false`). So a repeat less than a second later never makes a second
 * job, and one two seconds later or more always does. A key per second alone would let a double
 * click across a second's boundary through; the key of the second before is looked for too.
 * The schedule's row lock serialises run-nows, so the look sees what the one before committed.
 * A schedule that runs one at a time (overlap 'skip') whose run is unfinished answers that run
 * (`created: false, overlapping: true`).
 */
export async function scheduleRunNow(pool: pg.Pool, p: { name: string; doorbell?: Doorbell | null }): Promise<ScheduleRun> {
  const made = await useTransaction(pool, async (client) => {
    const locked = (await run(client, sql.scheduleRunLock, [p.name])).rows[0];
    if (!locked) throw noSchedule(p.name);
    const second = Math.floor((locked.at as Date).getTime() / 1000);
    const key = runNowKey(p.name, second);
    const window = [runNowKey(p.name, second - 1), key];
    const singletonKey = scheduleSingletonKey(p.name);
    for (let k = 0; k < KEY_FREED_TRIES; k++) {
      const inserted = (await run(client, sql.scheduleRunNow, [p.name, key, window, singletonKey])).rows[0];
      if (inserted) {
        const ring = { jobId: String(inserted.job_id), queue: inserted.queue as string, priority: inserted.priority as number };
        // Due at once: rung at the schedule's priority once committed.
        return { id: ring.jobId, queue: ring.queue, created: true, ring };
      }
      const existing = (await run(client, sql.jobIdsByIdempotencyKey, [window])).rows;
      // The newest, should both seconds hold one (a key given by hand to POST /api/jobs).
      const hit = existing.sort((a, b) => compareJobIds(String(b.job_id), String(a.job_id)))[0];
      if (hit) return { id: String(hit.job_id), queue: hit.queue as string, created: false, ring: null };
      // Skipping overlaps, and a run of it is unfinished: that run is the answer.
      const holder = (await run(client, sql.jobIdsBySingletonKey, [[singletonKey]])).rows[0];
      if (holder) return { id: String(holder.job_id), queue: holder.queue as string, created: false, overlapping: true as const, ring: null };
      // Its job was deleted, or the run finished, in between: the key is free again.
    }
    throw new Error(`run-now of schedule ${JSON.stringify(p.name)}: its key conflicted but no job holds it`);
  });
  const { ring, ...result } = made;
  if (p.doorbell && ring) await p.doorbell.ring([ring]);
  return { schedule: p.name, ...result };
}

/**
 * scheduleTick — enqueue every due tick, each exactly once across all processes: the tick's
 * row is locked (SKIP LOCKED: another process is taking it), the job inserted (with an
 * idempotency key naming the tick), and the schedule moved to its next tick with a
 * compare-and-swap on the tick it saw — in one transaction. Ticks missed while no worker
 * ran collapse into one run. A schedule that skips overlapping runs (overlap 'skip') whose
 * run is still unfinished moves on without a job. Returns the jobs enqueued (rung here).
 */
export async function scheduleTick(pool: pg.Pool, p: { doorbell?: Doorbell | null } = {}): Promise<EnqueueResult[]> {
  const { rows: scheduled } = await run(pool, sql.scheduleDue, []);
  const out: EnqueueResult[] = [];
  // One schedule that cannot tick (its job refused by the database) must not hold up the
  // ones due after it: each goes on its own, and the failures are reported together.
  const failed: { schedule: string; err: unknown }[] = [];
  const rings: Ring[] = [];
  for (const due of scheduled) {
    try {
      const job = await useConnection(pool, async (client) => {
        await client.query('BEGIN');
        const locked = await run(client, sql.scheduleLock, [due.name, due.next_run_at]);
        if (locked.rowCount === 0) {
          await client.query('ROLLBACK');
          return null;
        }
        const d = locked.rows[0];
        const tick: Date = d.next_run_at;
        const next = nextTickAfter(d.cron, d.timezone, nextTick(d.cron, d.timezone, tick, d.name), d.db_now, d.name);
        const [enqueued] = await jobEnqueue(client, [
          {
            type: d.type,
            queue: d.queue,
            payload: d.payload,
            maxAttempts: d.max_attempts,
            priority: d.priority,
            idempotencyKey: scheduleTickKey(d.name, tick),
            singletonKey: d.overlap === 'skip' ? scheduleSingletonKey(d.name) : null,
          },
        ]);
        // A run of it still unfinished holds the key: this tick is skipped, not owed. (The
        // tick's own key answering is the tick's job, as for any schedule.)
        const skipped = enqueued!.heldBy === 'singletonKey';
        if (skipped) log.debug('schedule tick skipped: a run of it is unfinished', { schedule: d.name, tick: tick.toISOString(), unfinished: enqueued!.id });
        const advanced = await run(client, sql.scheduleAdvance, [d.name, tick, next, enqueued!.id, skipped]);
        if (advanced.rowCount !== 1) {
          await client.query('ROLLBACK');
          return null;
        }
        await client.query('COMMIT');
        if (enqueued!.created) rings.push({ jobId: enqueued!.id, queue: enqueued!.queue, priority: d.priority });
        return skipped ? null : enqueued!;
      });
      if (job) out.push(job);
    } catch (err) {
      failed.push({ schedule: due.name, err });
      // Said where operators look, not only in the workers' log. Best effort: when the
      // database itself is what failed, this fails too, and the log still has it.
      const said = storableText(((err as Error)?.message || String(err)).slice(0, 2_000));
      await run(pool, sql.scheduleTickFailed, [due.name, due.next_run_at, said]).catch(() => {});
    }
  }
  if (p.doorbell && rings.length) await p.doorbell.ring(rings);
  if (failed.length) {
    throw new AggregateError(
      failed.map((f) => f.err),
      `${failed.length} schedule(s) could not tick: ${failed.map((f) => `${f.schedule} (${(f.err as Error)?.message ?? f.err})`).join('; ')}`,
    );
  }
  return out;
}
