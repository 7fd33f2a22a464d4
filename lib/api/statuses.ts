/**
 * The six job statuses for browser code (which must not bundle the database schema).
 * lib/api/statuses.test.ts checks this list against the pgEnum, so it cannot drift.
 */
export const JOB_STATUSES = ['queued', 'running', 'retrying', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const isJobStatus = (s: string): s is JobStatus => (JOB_STATUSES as readonly string[]).includes(s);
