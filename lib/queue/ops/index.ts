/**
 * The queue's operations: typed functions over the statements in ../statements, the only
 * module that runs them. The worker, the HTTP API, the console and the CLI all call
 * these same functions, so a button can never do what the state machine forbids.
 *
 * Each takes an executor (a pool, or a client inside the caller's transaction) and a
 * params object. Zero rows is an answer, not an exception: worker ops return what was
 * accepted; operator ops report per item what happened and, when nothing did, why
 * (from the job's current row, read after the refusal).
 *
 *   enqueue.ts    producers: one job or a batch, with idempotency and singleton keys
 *   claim.ts      a worker's claims, paused and limited queues' under their lock too
 *   running.ts    a worker's fenced writes on what it holds
 *   actions.ts    an operator's: cancel, requeue, reschedule, delete, with per-job reports
 *   recover.ts    the recover sweep and its dry run
 *   prune.ts      retention, and deleting the stored results of jobs that went
 *   queues.ts     queue controls, what a waiting job waits for, the Postgres-only doorbell
 *   schedules.ts  recurring jobs
 *   workers.ts    the worker registry and job types
 *   internal.ts   what they share (not exported): running a statement, array and per-job parameters
 */
export * from './actions';
export * from './claim';
export * from './enqueue';
export * from './prune';
export * from './queues';
export * from './recover';
export * from './running';
export * from './schedules';
export * from './workers';
