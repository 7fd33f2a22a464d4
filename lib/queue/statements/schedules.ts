import { attemptsFor, type Statement } from './fragments';

/**
 * scheduleDue — schedules whose next tick is due, with the database clock: those whose
 * last tick went through first, then those failing, the one that failed longest ago first.
 * A failing schedule stays at its tick; by tick order alone, a hundred of them would fill
 * every batch and no other schedule would tick again.
 * Returns: name, cron, timezone, queue, type, payload, max_attempts, next_run_at, now.
 */
export const scheduleDue: Statement = {
  name: 'leasehold_schedule_due',
  text: `SELECT *, now() AS db_now FROM schedules WHERE enabled AND paused_at IS NULL AND next_run_at <= now()
          ORDER BY last_error_at NULLS FIRST, next_run_at LIMIT 100`,
};

/**
 * A schedule still at the tick a process read, compared to the millisecond: the tick comes
 * back as a JavaScript Date, so a next_run_at with microseconds (an operator's
 * `UPDATE schedules SET next_run_at = now()`) would never match, and the schedule would
 * never tick again.
 */
const tickIs = (param: string) => `date_trunc('milliseconds', next_run_at) = ${param}`;

/**
 * scheduleAdvance — move a schedule to its next tick, if it is still at the tick this
 * process saw (a compare-and-swap: of several processes, exactly one wins each tick).
 * Params: $1 name, $2 the tick seen (next_run_at), $3 the next tick, $4 the job enqueued,
 *         $5 skipped (overlap 'skip': a run was unfinished and no job was made; the last
 *         run and its job stay as they were, the tick is kept as last_skipped_at and the
 *         unfinished run, $4, as last_skipped_job_id).
 */
export const scheduleAdvance: Statement = {
  name: 'leasehold_schedule_advance',
  text: `
UPDATE schedules
   SET next_run_at = $3,
       last_run_at = CASE WHEN $5::boolean THEN last_run_at ELSE $2 END,
       last_job_id = CASE WHEN $5::boolean THEN last_job_id ELSE $4 END,
       last_skipped_at = CASE WHEN $5::boolean THEN $2 ELSE last_skipped_at END,
       last_skipped_job_id = CASE WHEN $5::boolean THEN $4 ELSE last_skipped_job_id END,
       last_error = NULL, last_error_at = NULL, updated_at = now()
 WHERE name = $1 AND ${tickIs('$2')} AND enabled AND paused_at IS NULL
RETURNING name`,
};

/**
 * scheduleTickFailed — record why a schedule's due tick could not be enqueued, if it is
 * still at that tick (a schedule redefined or advanced meanwhile keeps its own state).
 * Params: $1 name, $2 the tick tried (next_run_at), $3 the error text.
 */
export const scheduleTickFailed: Statement = {
  name: 'leasehold_schedule_tick_failed',
  text: `
UPDATE schedules
   SET last_error = $3, last_error_at = now()
 WHERE name = $1 AND ${tickIs('$2')}
RETURNING name`,
};

const scheduleInsert = `
INSERT INTO schedules AS s (name, cron, timezone, queue, type, payload, max_attempts, next_run_at, enabled, priority, overlap)
VALUES ($1, $2, $3, $4, $5, $6::jsonb, ${attemptsFor('$7::int', '$5::text')}, $8, coalesce($9::boolean, true), $10, coalesce($11::text, 'allow'))`;

/**
 * scheduleUpsert — define (or redefine) a schedule. Params: $1 name, $2 cron, $3 timezone,
 * $4 queue, $5 type, $6 payload (JSON), $7 max_attempts (NULL: the type's as the schedule is
 * defined, see attemptsFor), $8 first tick, $9 enabled (NULL: a new one is, a redefined one
 * keeps what it was: an edit from the console does not switch a disabled schedule on),
 * $10 priority, $11 overlap ('allow' or 'skip'; NULL: a new one allows, a redefined one keeps
 * what it was, as for $9).
 * A redefinition keeps next_run_at when the cron and timezone are unchanged, and never
 * touches paused_at: an operator's pause outlives the upsert every worker start makes.
 * Returns the row, `created`: a new schedule (a row an upsert inserted has no xmax), and
 * `previous`: the definition it replaced (as the statement's snapshot saw it), for the audit log;
 * of its payload only whether it differs (`payloadChanged`: a payload may be large, or hold secrets).
 */
export const scheduleUpsert: Statement = {
  name: 'leasehold_schedule_upsert',
  text: `WITH previous AS (SELECT cron, timezone, queue, type, priority, max_attempts, overlap, payload FROM schedules WHERE name = $1)
${scheduleInsert}
ON CONFLICT (name) DO UPDATE SET
  -- the tick it was waiting for stands, unless the cron, the zone, or a switch back on
  -- (the ticks while it was off are not owed) makes it start from the next one
  next_run_at = CASE WHEN s.cron = EXCLUDED.cron AND s.timezone = EXCLUDED.timezone AND (s.enabled OR NOT coalesce($9::boolean, s.enabled))
                     THEN s.next_run_at ELSE EXCLUDED.next_run_at END,
  cron = EXCLUDED.cron, timezone = EXCLUDED.timezone, queue = EXCLUDED.queue, type = EXCLUDED.type,
  payload = EXCLUDED.payload, max_attempts = EXCLUDED.max_attempts, enabled = coalesce($9::boolean, s.enabled), priority = EXCLUDED.priority,
  overlap = coalesce($11::text, s.overlap),
  -- a redefinition starts over: the error belonged to the definition it replaces
  last_error = NULL, last_error_at = NULL, updated_at = now()
RETURNING *, (xmax = 0) AS created,
          (SELECT json_build_object('cron', p.cron, 'timezone', p.timezone, 'queue', p.queue, 'type', p.type, 'priority', p.priority,
                                    'maxAttempts', p.max_attempts, 'overlap', p.overlap,
                                    'payloadChanged', p.payload IS DISTINCT FROM s.payload) FROM previous p) AS previous`,
};

/** scheduleCreate — scheduleUpsert for a new name only: no row when one by that name exists. */
export const scheduleCreate: Statement = {
  name: 'leasehold_schedule_create',
  text: `${scheduleInsert}
ON CONFLICT (name) DO NOTHING
RETURNING *, true AS created`,
};

/**
 * scheduleLock — lock a schedule's due tick for this transaction (SKIP LOCKED: another
 * process has it). Params: $1 name, $2 tick. Returns the row as locked: the tick's job is
 * built from it, not from the earlier read (a redefinition may have landed in between).
 */
export const scheduleLock: Statement = {
  name: 'leasehold_schedule_lock',
  text: `SELECT *, now() AS db_now FROM schedules WHERE name = $1 AND ${tickIs('$2')} AND enabled AND paused_at IS NULL FOR UPDATE SKIP LOCKED`,
};

/** The database clock. */
export const dbClock: Statement = { name: 'leasehold_db_clock', text: `SELECT now() AS now` };

export const scheduleDelete: Statement = {
  name: 'leasehold_schedule_delete',
  text: `DELETE FROM schedules WHERE name = $1 RETURNING name`,
};

export const scheduleList: Statement = {
  name: 'leasehold_schedule_list',
  text: `SELECT *, now() AS db_now FROM schedules ORDER BY name`,
};

/** scheduleGet — one schedule, and the database clock. Params: $1 name. */
export const scheduleGet: Statement = {
  name: 'leasehold_schedule_get',
  text: `SELECT *, now() AS db_now FROM schedules WHERE name = $1`,
};

/**
 * schedulePause — an operator's pause: no tick is enqueued until a resume. Waits for a tick
 * being enqueued (its row lock), so a pause that returns is one no later tick ignores.
 * Params: $1 name. Compare: not paused already. Zero rows: no such schedule, or paused.
 */
export const schedulePause: Statement = {
  name: 'leasehold_schedule_pause',
  text: `
UPDATE schedules SET paused_at = now(), updated_at = now()
 WHERE name = $1 AND paused_at IS NULL
RETURNING *, now() AS db_now`,
};

/**
 * scheduleResume — end a pause, from the next tick after now: the ticks while it was paused
 * are not owed (as for a schedule switched back on), so a resume never makes a burst of runs.
 * Params: $1 name, $2 the next tick (computed from the cron and the database clock by the
 * caller), $3 the cron and $4 the zone it was computed from. Compare: paused, and still that
 * cron and zone (a redefinition in between would be given another expression's tick).
 * The tick error is cleared: it was about a tick that is no longer owed.
 */
export const scheduleResume: Statement = {
  name: 'leasehold_schedule_resume',
  text: `
UPDATE schedules
   SET paused_at = NULL, next_run_at = $2, last_error = NULL, last_error_at = NULL, updated_at = now()
 WHERE name = $1 AND paused_at IS NOT NULL AND cron = $3 AND timezone = $4
RETURNING *, now() AS db_now`,
};

/**
 * scheduleRunLock — lock a schedule for an operator's "run now" (waiting for another run-now,
 * a pause or a tick that holds it), and read the database clock after the wait
 * (clock_timestamp(), not now(), the transaction's start: a run-now that waited for another
 * must not date itself before the one it waited for). The run-now that follows in the same
 * transaction takes a new snapshot, so it sees the job the one before it committed.
 * Params: $1 name.
 */
export const scheduleRunLock: Statement = {
  name: 'leasehold_schedule_run_lock',
  text: `SELECT name, clock_timestamp() AS at FROM schedules WHERE name = $1 FOR UPDATE`,
};

/**
 * scheduleRunNow — an operator's "run now": the job the schedule's ticks make, due now, with
 * the schedule's tick left where it is. Params: $1 name, $2 this run's idempotency key,
 * $3 the keys of run-nows close enough to be the same click (see ops.scheduleRunNow), $4 the
 * schedule's singleton key, which the job takes when the schedule skips overlapping runs.
 * Compare: no job holds one of those keys (and ON CONFLICT, for $2 itself, and for $4 held by
 *          an unfinished run).
 * Returns: job_id, queue, priority (the job is due at once) — or no row when a run-now just
 *          made its job, or a run of it is unfinished (overlap 'skip').
 */
export const scheduleRunNow: Statement = {
  name: 'leasehold_schedule_run_now',
  text: `
INSERT INTO jobs (queue, type, payload, max_attempts, attempt_budget, run_at, idempotency_key, priority, singleton_key)
SELECT s.queue, s.type, s.payload, s.max_attempts, s.max_attempts, now(), $2, s.priority,
       CASE WHEN s.overlap = 'skip' THEN $4::text END
  FROM schedules s
 WHERE s.name = $1
   AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.idempotency_key = ANY($3::text[]))
ON CONFLICT DO NOTHING
RETURNING job_id, queue, priority`,
};
