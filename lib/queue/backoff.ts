/**
 * Retry delay after a failed attempt: exponential with "equal jitter" (half fixed, half
 * random), so a burst of jobs failing together does not retry together.
 * attempt is the attempt that just failed (1-based). A pure function of its inputs.
 */
export interface BackoffOptions {
  /** Delay after the first failure before jitter, in ms. Default 1000. */
  baseMs?: number;
  /** Upper bound of any delay, in ms. Default 1 hour. */
  maxMs?: number;
  /** A number in [0, 1); Math.random by default (tests pass a fixed one). */
  random?: () => number;
}

export const DEFAULT_BACKOFF_BASE_MS = 1000;
export const DEFAULT_BACKOFF_MAX_MS = 3_600_000;

export function backoffMs(attempt: number, opts: BackoffOptions = {}): number {
  const base = opts.baseMs ?? DEFAULT_BACKOFF_BASE_MS;
  const max = opts.maxMs ?? DEFAULT_BACKOFF_MAX_MS;
  const random = opts.random ?? Math.random;
  const exp = Math.min(max, base * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
  return Math.round(exp / 2 + random() * (exp / 2));
}

/**
 * Which try of its current budget an attempt is (1 = the first since the job was enqueued
 * or given a fresh budget): the backoff grows with the failures of this budget, not with
 * attempt_count, the lifetime fencing token, which attempts given back (a shutdown, a
 * revoke) and earlier budgets also raise. A job requeued with a fresh budget after twelve
 * attempts backs off one second on its next failure, not an hour.
 */
export function attemptInBudget(j: { attemptCount: number; maxAttempts: number; attemptBudget: number }): number {
  return Math.max(1, j.attemptCount - (j.maxAttempts - j.attemptBudget));
}
