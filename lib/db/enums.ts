/**
 * The database's enum types, as plain values: the schema (schema.ts) declares them with
 * these, and code that needs only the values (the worker, lib/queue/status.ts) imports them
 * from here, without drizzle's table builders (about 200 modules, 0.2 s of a process's start).
 */

export const JOB_STATUS_VALUES = ['queued', 'running', 'retrying', 'completed', 'failed', 'cancelled'] as const;

/** How one attempt (one claim) ended. An attempt row is written once, when it ends. */
export const ATTEMPT_OUTCOME_VALUES = [
  'completed', // the handler returned and the fenced completion was accepted
  'failed', // the handler threw and no attempts were left (or the error was permanent): dead letter
  'retried', // the handler threw and the job went back to `retrying` with a backoff
  'lease_lost', // the lease expired without a word from the worker: a crash, a stall or a partition
  'cancelled', // an operator cancelled the job while this attempt ran
  'aborted', // the worker gave the job back (graceful shutdown) or an operator revoked the lease
  'snoozed', // the handler put the job off (SnoozeError, 0032): queued for later, the attempt given back
] as const;
