/**
 * The worker's own view of a lease (worker/runner.ts watchdog), shared with the
 * configuration check that heartbeats come often enough for it.
 */

/** The local lease watchdog's period at most. */
export const WATCHDOG_MS = 1_000;

/**
 * How long before its lease would end (by the worker's clock) a job that has had no
 * renewal is given up: the handler's signal fires this much before the database may hand
 * the job to another worker, time for it to stop. A twentieth of the lease (1.5 s of the
 * default 30): more would give up on renewals that are slow but still in time.
 */
export const leaseGuardMs = (leaseMs: number) => leaseMs / 20;

/** The watchdog's period: no longer than the guard, so a tick always falls inside it. */
export const watchdogPeriodMs = (o: { heartbeatMs: number; leaseMs: number }) => Math.min(o.heartbeatMs, WATCHDOG_MS, leaseGuardMs(o.leaseMs));

/**
 * How long after the last successful renewal was sent the watchdog gives a job up: the
 * guard, and one period more, short of the lease (27.5 s of the default 30). A renewal must
 * come sooner, or every job running longer than that is aborted.
 */
export const giveUpAfterMs = (o: { heartbeatMs: number; leaseMs: number }) => o.leaseMs - leaseGuardMs(o.leaseMs) - watchdogPeriodMs(o);
