import type { Job } from '../../lib/queue/job';
import type { Logger } from '../../lib/log';

/** What a handler gets besides its payload. */
export interface JobContext {
  job: Pick<Job, 'id' | 'queue' | 'type' | 'attemptCount' | 'maxAttempts'>;
  /** This attempt's number (1-based): the fencing token of its lease. */
  attempt: number;
  /**
   * Aborted when the job must stop: its lease was lost (another worker may own it now),
   * an operator cancelled it, or the worker is shutting down. Pass it to anything that
   * takes a signal; whatever the handler returns after it fires is not recorded.
   */
  signal: AbortSignal;
  log: Logger;
}

export type Handler = (payload: any, ctx: JobContext) => unknown | Promise<unknown>;
