/** The built-in demo job types (CONTRACT.md): for demos, tests and benchmarks. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Handler } from './types';

/** `{ms, failTimes?, crash?}`: waits `ms`; throws on its first `failTimes` attempts; `crash` kills the process. */
export const demoSleep: Handler = async (payload: { ms: number; failTimes?: number; crash?: boolean }, ctx) => {
  if (payload.crash) {
    // A poison job: takes its whole worker process down, like a segfaulting native module.
    process.kill(process.pid, 'SIGKILL');
    await new Promise(() => {});
  }
  await sleep(payload.ms, undefined, { signal: ctx.signal });
  if (ctx.attempt <= (payload.failTimes ?? 0)) {
    throw new Error(`demo.sleep: failing attempt ${ctx.attempt} of the first ${payload.failTimes} on purpose`);
  }
  return { slept: payload.ms, attempt: ctx.attempt };
};

/** `{}`: returns at once. */
export const demoNoop: Handler = () => null;

/**
 * `{steps, msPerStep}`: works through `steps` steps, saving a checkpoint after each, so a
 * retry after a crash resumes at the step after the last one saved. Returns which steps
 * this attempt ran.
 */
export const demoSteps: Handler = async (payload: { steps: number; msPerStep: number }, ctx) => {
  const done = Number(ctx.checkpoints.step ?? 0);
  const ran: number[] = [];
  for (let step = done + 1; step <= payload.steps; step++) {
    await sleep(payload.msPerStep, undefined, { signal: ctx.signal });
    await ctx.checkpoint('step', step);
    ran.push(step);
  }
  return { steps: payload.steps, resumedAfter: done, ran };
};
