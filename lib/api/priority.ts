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
export interface Ahead {
  higher: number;
  sameLevel: number;
  capped: boolean;
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * A due waiting job's place in line, in words: what claims of its queue take before it —
 * every due job of a higher priority, then those of its own that came due first.
 */
export function placeInLine(a: Ahead, priority: number): string {
  const total = a.higher + a.sameLevel;
  if (total === 0) return 'next: no due job of its queue is ahead of it';
  const parts = [
    ...(a.higher ? [`${count(a.higher)} of priority ${priority > 1 ? `0–${priority - 1}` : '0'}`] : []),
    ...(a.sameLevel ? [`${count(a.sameLevel)} of priority ${priority} that came due first`] : []),
  ];
  return `${a.capped ? 'at least ' : ''}${count(total)} due job${total === 1 ? '' : 's'} ahead of it: ${parts.join(', then ')}`;
}
