import type { JobDetailDto } from './types';

/**
 * Job priorities for browser code (which must not bundle the queue library):
 * lib/api/priority.test.ts checks these against lib/queue/job.ts, so they cannot drift.
 */
export const DEFAULT_PRIORITY = 0;
export const LAST_PRIORITY = 9;

/** What a priority means, in words (a badge's title, the job page). */
export const priorityMeaning = (p: number) =>
  p === DEFAULT_PRIORITY ? 'the default: runs first' : `runs after jobs of priority 0${p > 1 ? `–${p - 1}` : ''} that are due`;

/** A due waiting job's place in its queue's line (GET /api/jobs/:id's `ahead`). */
export type Ahead = NonNullable<JobDetailDto['ahead']>;

const count = (n: number) => n.toLocaleString('en-US');

/**
 * A due waiting job's place in line, in words: the due jobs of its queue that claims take
 * before it — every one of a higher priority, then those of its own that came due first.
 * Past the cap, only how many at least (which levels hold them is not known).
 */
export function placeInLine(a: Ahead, priority: number): string {
  const total = a.higher + a.sameLevel;
  if (a.capped) return `at least ${count(total)} due jobs of its queue ahead of it`;
  if (total === 0) return 'first: no due job of its queue is ahead of it';
  const parts = [
    ...(a.higher ? [`${count(a.higher)} of priority ${priority > 1 ? `0–${priority - 1}` : '0'}`] : []),
    ...(a.sameLevel ? [`${count(a.sameLevel)} of priority ${priority} that came due first`] : []),
  ];
  return `${count(total)} due job${total === 1 ? '' : 's'} of its queue ahead of it: ${parts.join(', then ')}`;
}
