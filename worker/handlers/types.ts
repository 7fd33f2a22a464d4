import type { Job } from '../../lib/queue/job';
import type { Logger } from '../../lib/log';

/** What a handler gets besides its payload. */
export interface JobContext {
  job: Pick<Job, 'id' | 'queue' | 'type' | 'attemptCount' | 'maxAttempts'>;
  /** This attempt's number (1-based): the fencing token of its lease. */
  attempt: number;
  /**
   * Aborted when the job must stop: its lease was lost (another worker may own it now),
   * an operator cancelled it, it ran past its time limit (LEASEHOLD_JOB_TIMEOUT_MS, or its
   * type's timeoutMs: the attempt then fails as timed out), or the worker is shutting down. Pass it to anything that
   * takes a signal; whatever the handler returns after it fires is not recorded. A handler
   * still running a lease after its signal fired is given up on: its slot is freed and the
   * attempt ends (a cancelled job `cancelled`), though Node cannot stop its code.
   */
  signal: AbortSignal;
  log: Logger;
  /**
   * Progress saved by earlier attempts (name → value): a retry after a crash resumes
   * from here instead of starting over.
   */
  checkpoints: Readonly<Record<string, unknown>>;
  /**
   * Saves progress under `name` (JSON, up to 1 MiB), fenced like every write to a running
   * job: if this attempt lost its lease the checkpoint is not saved and the call rejects
   * (the handler should stop; its signal is aborted too). Await it: a rejection nobody
   * handles is logged by the worker process, not thrown.
   */
  checkpoint(name: string, value: unknown): Promise<void>;
}

export type Handler = (payload: any, ctx: JobContext) => unknown | Promise<unknown>;
