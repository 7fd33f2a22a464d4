/**
 * The six job statuses for browser code (which must not bundle the database schema): the
 * values the database enum is declared with (lib/db/enums.ts, free of imports).
 */
import { JOB_STATUS_VALUES } from '../db/enums';

export const JOB_STATUSES = JOB_STATUS_VALUES;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const isJobStatus = (s: string): s is JobStatus => (JOB_STATUSES as readonly string[]).includes(s);
