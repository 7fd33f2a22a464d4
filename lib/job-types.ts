/**
 * The job types this installation accepts, with the schema of each payload. Producers
 * (HTTP API, CLI, client) validate against it before anything is written; the worker
 * runs the handler registered under the same name (worker/handlers).
 */
import { z } from 'zod';

export interface JobTypeSpec {
  description: string;
  payload: z.ZodType;
  /**
   * How long one attempt's handler may run (ms) before its signal is aborted and the attempt
   * fails as timed out (retried, or the dead letter). Default: LEASEHOLD_JOB_TIMEOUT_MS.
   */
  timeoutMs?: number;
}

export const jobTypes = {
  'demo.sleep': {
    description: 'Waits `ms`; throws on its first `failTimes` attempts; with `crash: true` kills its own process (a poison job).',
    payload: z
      .object({
        ms: z.number().int().min(0).max(3_600_000),
        failTimes: z.number().int().min(0).max(1_000).optional(),
        crash: z.boolean().optional(),
      })
      .passthrough(),
  },
  'demo.steps': {
    description: 'Works through `steps` steps of `msPerStep` each, checkpointing after every step: a retry resumes after the last step saved.',
    payload: z
      .object({
        steps: z.number().int().min(1).max(10_000),
        msPerStep: z.number().int().min(0).max(600_000),
      })
      .passthrough(),
  },
  'demo.noop': {
    description: 'Returns at once (throughput benchmarks).',
    payload: z.object({}).passthrough(),
  },
} satisfies Record<string, JobTypeSpec>;

export type JobTypeName = keyof typeof jobTypes;

export const isJobType = (t: string): t is JobTypeName => Object.hasOwn(jobTypes, t);
