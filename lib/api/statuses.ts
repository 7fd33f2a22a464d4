/**
 * The job statuses for browser code, which must not bundle the database schema:
 * lib/queue/status.ts is free of it (its values come from lib/db/enums.ts, which imports
 * nothing), so this re-exports it rather than keeping a copy.
 */
export { isJobStatus, JOB_STATUSES, type JobStatus } from '../queue/status';
