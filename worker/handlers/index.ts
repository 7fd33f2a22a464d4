/** Job type → handler. Every type in lib/job-types.ts has a handler here (a test checks). */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { JobTypeName } from '../../lib/job-types';
import { demoNoop, demoSleep, demoSteps } from './demo';
import type { ScheduleInput } from '../../lib/queue/ops';
import type { Handler } from './types';

export const handlers: Record<JobTypeName, Handler> = {
  'demo.noop': demoNoop,
  'demo.sleep': demoSleep,
  'demo.steps': demoSteps,
};

/**
 * The built-in handlers plus those of LEASEHOLD_HANDLERS, a module (path relative to the
 * working directory) whose `handlers` export maps job types to handlers, and whose optional
 * `schedules` export lists recurring jobs defined in code (upserted when a worker starts).
 */
export async function loadHandlers(
  modulePath: string | undefined,
): Promise<{ handlers: Record<string, Handler>; schedules: ScheduleInput[] }> {
  if (!modulePath) return { handlers, schedules: [] };
  const mod = await import(pathToFileURL(path.resolve(modulePath)).href);
  if (!mod.handlers || typeof mod.handlers !== 'object') {
    throw new Error(`${modulePath} must export \`handlers\`: a record of job type → handler`);
  }
  return { handlers: { ...handlers, ...mod.handlers }, schedules: Array.isArray(mod.schedules) ? mod.schedules : [] };
}

export type { Handler, JobContext } from './types';
