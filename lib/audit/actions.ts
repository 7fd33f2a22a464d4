/**
 * Every action the audit log records, with what it means: the one list. `audited` takes
 * only these names (lib/audit/log.ts), the /audit page offers them as its Action filter and
 * the API's description lists them. No server imports: the console imports it too.
 */
export const AUDIT_ACTIONS = {
  requeue: 'requeue one job',
  cancel: 'cancel one job',
  delete: 'delete one job',
  recover: 'recover one job, or run the recover sweep',
  copy: 'enqueue a copy of one job (its type; the payload, queue and attempts as given, else its own)',
  reschedule: 'move one waiting job: a new due time, priority or both',
  'bulk.requeue': 'requeue several jobs (ids or a filter)',
  'bulk.cancel': 'cancel several jobs',
  'bulk.delete': 'delete several jobs',
  'bulk.recover': 'recover several jobs',
  'queue.pause': 'pause a queue',
  'queue.resume': 'resume a queue',
  'queue.limits': "set a queue's concurrency or rate limit",
  'worker.quiet': 'quiet a worker process (it claims no new job; those in hand finish)',
  'worker.resume': 'let a quieted worker process claim again',
  'schedule.add': 'add or replace a recurring job',
  'schedule.remove': 'remove a recurring job',
  'schedule.run': "enqueue a recurring job's job now (its next tick stays)",
  'schedule.pause': 'pause a recurring job (no ticks until resumed)',
  'schedule.resume': 'resume a recurring job from its next tick',
  'user.add': 'add a user',
  'user.set': "set a user's role (or, with user add --replace, role and password)",
  'user.disable': 'disable a user',
  'user.setup': 'the first admin, from the setup link',
  'token.create': 'create an API token',
  'token.revoke': 'revoke an API token',
  'view.save': 'save a view (named filters of /jobs or /dead-letter, shared with everyone)',
  'view.delete': 'delete a saved view',
} as const;

export type AuditAction = keyof typeof AUDIT_ACTIONS;

export const AUDIT_ACTION_NAMES = Object.keys(AUDIT_ACTIONS) as AuditAction[];

export const isAuditAction = (s: string): s is AuditAction => Object.hasOwn(AUDIT_ACTIONS, s);
