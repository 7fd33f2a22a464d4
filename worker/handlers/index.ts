/** Job type → handler. Every type in lib/job-types.ts has a handler here (a test checks). */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isJobType, type JobTypeDeclaration, type JobTypeName, registrationOf } from '../../lib/job-types';
import { type BackoffOptions, DEFAULT_BACKOFF_BASE_MS, DEFAULT_BACKOFF_MAX_MS } from '../../lib/queue/backoff';
import { RETRY_AFTER_MAX_MS } from '../../lib/queue/errors';
import { MAX_ATTEMPTS_LIMIT } from '../../lib/queue/job';
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
/** The handlers module cannot be used as written: a restart would refuse it the same way (worker/exit-codes.ts). */
export class HandlersModuleError extends Error {
  override name = 'HandlersModuleError';
}

export async function loadHandlers(modulePath: string | undefined): Promise<{
  handlers: Record<string, Handler>;
  schedules: ScheduleInput[];
  registrations: JobTypeRegistration[];
  /** Each type's declared backoff, for the types that declare one. */
  backoffs: Map<string, BackoffOptions>;
}> {
  const backoffs = new Map<string, BackoffOptions>();
  if (!modulePath) return { handlers, schedules: [], registrations: [], backoffs };
  const url = pathToFileURL(path.resolve(modulePath)).href;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a module of the user's, checked below
  let mod: any;
  try {
    mod = await import(url);
  } catch (err) {
    // The module itself missing, or not valid code: no restart mends it. An error its own
    // top-level code throws (a database it reads at import, away for now) may pass: as it was.
    const e = err as NodeJS.ErrnoException & { url?: string };
    const missing = (e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'ERR_UNSUPPORTED_DIR_IMPORT') && String(e.message).includes(path.resolve(modulePath));
    if (missing || err instanceof SyntaxError) throw new HandlersModuleError(`${modulePath}: ${(err as Error).message.split('\n')[0]}`);
    throw err;
  }
  if (!mod.handlers || typeof mod.handlers !== 'object') {
    throw new HandlersModuleError(`${modulePath} must export \`handlers\`: a record of job type → handler`);
  }
  const declared: Record<string, JobTypeDeclaration> = mod.jobTypes ?? {};
  if (typeof declared !== 'object') throw new HandlersModuleError(`${modulePath}: \`jobTypes\` must be a record of job type → {description?, payload?, timeoutMs?, maxAttempts?, backoff?}`);
  const registrations: JobTypeRegistration[] = [];
  for (const [name, fn] of Object.entries(mod.handlers as Record<string, unknown>)) {
    if (typeof fn !== 'function') throw new HandlersModuleError(`${modulePath}: the handler of ${JSON.stringify(name)} is not a function`);
    const problem = typeNameProblem(name);
    if (problem) throw new HandlersModuleError(`${modulePath}: the job type ${JSON.stringify(name)} ${problem}`);
    // Own entries only: a type named "constructor" or "toString" must not read Object's.
    const d = Object.hasOwn(declared, name) ? declared[name] : undefined;
    const wrong = d && declarationProblem(d);
    if (wrong) throw new HandlersModuleError(`${modulePath}: jobTypes[${JSON.stringify(name)}]${wrong}`);
    if (d?.backoff) backoffs.set(name, { baseMs: d.backoff.baseMs, maxMs: d.backoff.maxMs });
    if (!isJobType(name)) registrations.push(registrationOf(name, d));
  }
  for (const name of Object.keys(declared)) {
    if (!Object.hasOwn(mod.handlers, name)) throw new HandlersModuleError(`${modulePath}: jobTypes declares ${JSON.stringify(name)}, which has no handler`);
  }
  if (mod.schedules !== undefined && !Array.isArray(mod.schedules)) throw new HandlersModuleError(`${modulePath}: \`schedules\` must be an array of {${SCHEDULE_FIELDS.join(', ')}}`);
  const schedules: ScheduleInput[] = mod.schedules ?? [];
  for (const [k, s] of schedules.entries()) {
    const wrong = scheduleShapeProblem(s);
    if (wrong) throw new HandlersModuleError(`${modulePath}: schedules[${k}]${wrong}`);
  }
  return {
    handlers: { ...handlers, ...mod.handlers },
    schedules,
    registrations,
    backoffs,
  };
}

/**
 * The fields of a declaration and of a schedule: any other is refused, as the API refuses an
 * unknown field. A misspelt one (`maxAtempts`, `tz`) left the default in place without a word.
 */
const DECLARATION_FIELDS = ['description', 'payload', 'timeoutMs', 'maxAttempts', 'backoff'] as const satisfies readonly (keyof JobTypeDeclaration)[];
const BACKOFF_FIELDS = ['baseMs', 'maxMs'] as const;
const SCHEDULE_FIELDS = ['name', 'cron', 'type', 'payload', 'queue', 'timezone', 'maxAttempts', 'priority', 'enabled', 'overlap'] as const satisfies readonly (keyof ScheduleInput)[];

/** The first own key of `o` not in `fields`, said as an error, or null. */
function unknownField(o: object, fields: readonly string[], at: string): string | null {
  const extra = Object.keys(o).find((k) => !fields.includes(k));
  return extra === undefined ? null : `${at}: unknown field ${JSON.stringify(extra)} (the fields are ${fields.join(', ')})`;
}

/** What is wrong with a schedule's shape (the definition itself is checked as the API's is, by scheduleUpsert), or null. */
function scheduleShapeProblem(s: unknown): string | null {
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return ` must be an object {${SCHEDULE_FIELDS.join(', ')}}`;
  const extra = unknownField(s, SCHEDULE_FIELDS, '');
  if (extra) return extra;
  for (const k of ['name', 'cron', 'type'] as const) if (typeof (s as Record<string, unknown>)[k] !== 'string') return `.${k} must be a string`;
  for (const k of ['queue', 'timezone'] as const) {
    const v = (s as Record<string, unknown>)[k];
    if (v !== undefined && typeof v !== 'string') return `.${k} must be a string`;
  }
  const enabled = (s as Record<string, unknown>).enabled;
  if (enabled !== undefined && typeof enabled !== 'boolean') return '.enabled must be true or false';
  return null;
}

const wholeMs = (v: unknown, max: number) => v === undefined || (Number.isInteger(v) && (v as number) > 0 && (v as number) <= max);

/** What is wrong with a type's declaration (its path and why), or null: the worker refuses to start on it. */
function declarationProblem(d: JobTypeDeclaration): string | null {
  if (typeof d !== 'object' || d === null || Array.isArray(d)) return ` must be an object {${DECLARATION_FIELDS.join(', ')}}`;
  const extra = unknownField(d, DECLARATION_FIELDS, '');
  if (extra) return extra;
  // zod 3 has no toJSONSchema: read as JSON Schema, its internals registered as a schema that checks nothing.
  const p = d.payload as Record<string, unknown> | undefined;
  if (p && typeof p === 'object' && '_def' in p && !('_zod' in p)) {
    return '.payload: a zod 3 schema; declare it with zod 4 (`import { z } from "zod"` from zod 4, or "zod/v4" from zod 3.25), or as a JSON Schema object';
  }
  if (!wholeMs(d.timeoutMs, Number.MAX_SAFE_INTEGER)) return '.timeoutMs must be a whole number of milliseconds above 0';
  if (d.maxAttempts !== undefined && !(Number.isInteger(d.maxAttempts) && d.maxAttempts >= 1 && d.maxAttempts <= MAX_ATTEMPTS_LIMIT)) {
    return `.maxAttempts must be a whole number from 1 to ${MAX_ATTEMPTS_LIMIT}`;
  }
  if (d.backoff !== undefined) {
    if (typeof d.backoff !== 'object' || d.backoff === null) return '.backoff must be {baseMs?, maxMs?}';
    const extraBackoff = unknownField(d.backoff, BACKOFF_FIELDS, '.backoff');
    if (extraBackoff) return extraBackoff;
    for (const k of ['baseMs', 'maxMs'] as const) {
      if (!wholeMs(d.backoff[k], RETRY_AFTER_MAX_MS)) return `.backoff.${k} must be a whole number of milliseconds from 1 to ${RETRY_AFTER_MAX_MS}`;
    }
    // Above the cap every delay would be the cap: not the backoff that was written.
    const max = d.backoff.maxMs ?? DEFAULT_BACKOFF_MAX_MS;
    if ((d.backoff.baseMs ?? DEFAULT_BACKOFF_BASE_MS) > max) {
      return `.backoff.baseMs must not be above backoff.maxMs (${max}${d.backoff.maxMs === undefined ? ', the default' : ''})`;
    }
  }
  return null;
}

/** What the API would refuse in a job's type (lib/http/schemas.ts typeName): no job could be enqueued for it. */
function typeNameProblem(name: string): string | null {
  const length = [...name].length;
  if (length < 1 || length > 200) return 'must have 1 to 200 characters';
  if (name.includes('\u0000') || LONE_SURROGATE.test(name)) return 'must be valid Unicode without NUL characters';
  return null;
}

export type { Handler, JobContext } from './types';
