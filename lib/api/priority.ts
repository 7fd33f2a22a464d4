/**
 * Job priorities for browser code (which must not bundle the queue library):
 * lib/api/priority.test.ts checks these against lib/queue/job.ts, so they cannot drift.
 */
export const DEFAULT_PRIORITY = 0;
export const LAST_PRIORITY = 9;

/** What a priority means, in words (a badge's title, the job page). */
export const priorityMeaning = (p: number) =>
  p === DEFAULT_PRIORITY ? 'the default: runs first' : `runs after jobs of priority 0${p > 1 ? `–${p - 1}` : ''} that are due`;
