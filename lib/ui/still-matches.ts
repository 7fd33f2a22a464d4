import type { JobFilters } from '../api/filters';
import type { JobRow } from '../api/types';

/**
 * Whether a listed job, as a fresh lookup read it at `readAtMs` (the database's clock), still
 * matches the list's filters: a row that no longer does is greyed out ("no longer matches this
 * view") rather than dropped. Only what the row itself tells is checked; a filter it cannot
 * (error text, payload, fingerprint) is taken as still matching.
 */
export function stillMatches(f: JobFilters, j: JobRow, readAtMs: number): boolean {
  if (f.status && j.status !== f.status) return false;
  if (f.queue && j.queue !== f.queue) return false;
  if (f.type && j.type !== f.type) return false;
  // A worker's jobs are those it ran last and those it lost (lib/queue/filters.ts): a job taken
  // over since names its new worker and still belongs (a crash's victims, the suspect among
  // them). Only the running list asks that it be the worker's now.
  if (f.worker && f.status === 'running' && j.workerId !== f.worker) return false;
  if (f.priority && j.priority !== Number(f.priority)) return false;
  if (f.minAttempts && j.attemptCount < Number(f.minAttempts)) return false;
  if (f.due) {
    // Waiting, and due (or not yet) as of the read: a claimed job has left "due now".
    if (j.status !== 'queued' && j.status !== 'retrying') return false;
    const due = Date.parse(j.runAt) <= readAtMs;
    if ((f.due === 'now') !== due) return false;
  }
  return true;
}
