/**
 * Job statuses and the transitions between them, from the values the database enums are
 * declared with, so the UI, the API and the tests never re-type them by hand.
 */
import { ATTEMPT_OUTCOME_VALUES, JOB_STATUS_VALUES } from '../db/enums';

export type JobStatus = (typeof JOB_STATUS_VALUES)[number];
export type AttemptOutcome = (typeof ATTEMPT_OUTCOME_VALUES)[number];

export const JOB_STATUSES: readonly JobStatus[] = JOB_STATUS_VALUES;
export const ATTEMPT_OUTCOMES: readonly AttemptOutcome[] = ATTEMPT_OUTCOME_VALUES;
export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];

export const isJobStatus = (s: string): s is JobStatus => (JOB_STATUSES as readonly string[]).includes(s);
export const isTerminal = (s: JobStatus) => TERMINAL_STATUSES.includes(s);

/**
 * Every transition the statements in statements/ can make: [from, to, by].
 * Used by tests (the property test checks no other transition ever happens) and by
 * the console to explain what an action can do.
 */
export const TRANSITIONS: ReadonlyArray<readonly [JobStatus, JobStatus, string]> = [
  ['queued', 'running', 'jobClaim / jobClaimNextAcross / jobClaimNext / jobClaimControlled'],
  ['retrying', 'running', 'jobClaim / jobClaimNextAcross / jobClaimNext / jobClaimControlled'],
  ['running', 'running', 'jobClaim (takeover of an expired lease) / jobCancel (request)'],
  ['running', 'completed', 'jobComplete'],
  ['running', 'retrying', 'jobFail / jobRecover'],
  ['running', 'failed', 'jobFail / jobRecover'],
  ['running', 'cancelled', 'jobCancelAck / jobRecover'],
  ['running', 'queued', 'jobRelease / jobRevoke / jobFail (a snooze)'],
  ['queued', 'cancelled', 'jobCancel'],
  ['retrying', 'cancelled', 'jobCancel'],
  ['failed', 'queued', 'jobRequeue'],
  ['cancelled', 'queued', 'jobRequeue'],
  ['completed', 'queued', 'jobRequeue'],
  ['retrying', 'queued', 'jobRequeue'],
  // The status kept, the due time or priority moved (an operator's).
  ['queued', 'queued', 'jobReschedule / jobRequeue (a job scheduled for later, due now)'],
  ['retrying', 'retrying', 'jobReschedule'],
];

export const canTransition = (from: JobStatus, to: JobStatus) =>
  TRANSITIONS.some(([f, t]) => f === from && t === to);
