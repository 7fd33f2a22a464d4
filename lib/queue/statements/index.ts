/**
 * Every SQL statement that writes job state, in one folder: one file per part of the
 * state machine, each statement a named constant with its contract above it.
 *
 * The state machine (see the README's Architecture section and ../shared/DESIGN.md §2):
 *
 *   queued ──claim──▶ running ──complete──▶ completed
 *   retrying ─claim─▶ running ──fail (attempts left)──▶ retrying (run_at = now() + backoff)
 *   running (lease expired) ──claim or recover──▶ running / retrying / failed / cancelled
 *   running ──fail (no attempts left, or permanent error)──▶ failed   (the dead letter)
 *   queued | retrying ──cancel──▶ cancelled;  running ──cancel──▶ cancel requested ──▶ cancelled
 *   running ──snooze (SnoozeError)──▶ queued (run_at = now() + delay, max_attempts + 1)
 *   failed | cancelled | completed | retrying ──operator requeue──▶ queued (a finished job
 *     only while its singleton key is free)
 *
 * Rules every statement here follows:
 *  - One statement per transition: the compare is in WHERE, the swap in SET, the new row
 *    in RETURNING. Zero rows means the transition was refused and nothing changed.
 *  - Row locks serialise competing writers: a second claimer re-evaluates WHERE against
 *    the committed row (or skips a locked one) and updates nothing.
 *  - Every write to a running job is fenced on worker_id AND attempt_count (the fencing
 *    token, which only ever grows) AND status = 'running'.
 *  - The database clock (now()) is the only clock. Durations (lease, backoff) are bound
 *    as milliseconds; no timestamp from a worker's clock is ever bound into lease SQL.
 *  - Batches are arrays, so one prepared statement serves one job or a thousand, and
 *    each row carries its own fence.
 *
 * Only lib/queue/ops imports these (a test enforces it); nothing else in the repository
 * writes the jobs or ended_attempts tables.
 *
 *   enqueue.ts    producers' inserts, and the key lookups after a conflict
 *   claim.ts      every claim: by id, next due, across queues, expired leases, controlled queues
 *   running.ts    the worker's fenced writes: heartbeat, checkpoint, complete, fail, release
 *   actions.ts    an operator's: cancel, requeue, reschedule, revoke, delete
 *   recover.ts    the sweep: expired leases, and the doorbell's repair (due jobs left waiting)
 *   prune.ts      retention
 *   schedules.ts  recurring jobs
 *   queues.ts     queue controls, what a queue's waiting jobs wait for, the Postgres-only doorbell
 *   workers.ts    the worker registry and job types
 *   fragments.ts  what they share: the Statement type, asSeen, `at`, the job columns
 */

export type { Statement } from './fragments';
export * from './actions';
export * from './claim';
export * from './enqueue';
export * from './prune';
export * from './queues';
export * from './recover';
export * from './running';
export * from './schedules';
export * from './workers';
