/** Job type → handler. Every type in lib/job-types.ts has a handler here (a test checks). */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isJobType, type JobTypeDeclaration, type JobTypeName, registrationOf } from '../../lib/job-types';
import { LONE_SURROGATE } from '../../lib/queue/text';
import type { JobTypeRegistration } from '../../lib/queue/ops';
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
 * working directory) whose `handlers` export maps job types to handlers, whose optional
 * `jobTypes` export declares a type's payload schema (zod, or JSON Schema), description
 * and time limit, and whose optional `schedules` export lists recurring jobs defined in
 * code (upserted when a worker starts). `registrations`: what the worker registers, so
 * that producers accept these types (lib/job-types.ts): one per handler that is not built in.
 */
export async function loadHandlers(modulePath: string | undefined): Promise<{
  handlers: Record<string, Handler>;
  schedules: ScheduleInput[];
  registrations: JobTypeRegistration[];
}> {
  if (!modulePath) return { handlers, schedules: [], registrations: [] };
  const mod = await import(pathToFileURL(path.resolve(modulePath)).href);
  if (!mod.handlers || typeof mod.handlers !== 'object') {
    throw new Error(`${modulePath} must export \`handlers\`: a record of job type → handler`);
  }
  const declared: Record<string, JobTypeDeclaration> = mod.jobTypes ?? {};
  if (typeof declared !== 'object') throw new Error(`${modulePath}: \`jobTypes\` must be a record of job type → {description?, payload?, timeoutMs?}`);
  const registrations: JobTypeRegistration[] = [];
  for (const [name, fn] of Object.entries(mod.handlers as Record<string, unknown>)) {
    if (typeof fn !== 'function') throw new Error(`${modulePath}: the handler of ${JSON.stringify(name)} is not a function`);
    const problem = typeNameProblem(name);
    if (problem) throw new Error(`${modulePath}: the job type ${JSON.stringify(name)} ${problem}`);
    const d = declared[name];
    if (d?.timeoutMs !== undefined && !(Number.isInteger(d.timeoutMs) && d.timeoutMs > 0)) {
      throw new Error(`${modulePath}: jobTypes[${JSON.stringify(name)}].timeoutMs must be a whole number of milliseconds above 0`);
    }
    if (!isJobType(name)) registrations.push(registrationOf(name, d));
  }
  for (const name of Object.keys(declared)) {
    if (!Object.hasOwn(mod.handlers, name)) throw new Error(`${modulePath}: jobTypes declares ${JSON.stringify(name)}, which has no handler`);
  }
  return {
    handlers: { ...handlers, ...mod.handlers },
    schedules: Array.isArray(mod.schedules) ? mod.schedules : [],
    registrations,
  };
}

/** What the API would refuse in a job's type (lib/http/schemas.ts typeName): no job could be enqueued for it. */
function typeNameProblem(name: string): string | null {
  const length = [...name].length;
  if (length < 1 || length > 200) return 'must have 1 to 200 characters';
  if (name.includes('\u0000') || LONE_SURROGATE.test(name)) return 'must be valid Unicode without NUL characters';
  return null;
}

export type { Handler, JobContext } from './types';
