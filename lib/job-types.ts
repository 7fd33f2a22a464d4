/**
 * The job types this installation accepts, with the schema of each payload. Producers
 * (HTTP API, CLI, client) validate against it before anything is written; the worker
 * runs the handler registered under the same name (worker/handlers).
 *
 * Two kinds: the built-in ones below, and those the workers register when they start
 * (the handlers of their LEASEHOLD_HANDLERS module, with the payload schemas and time
 * limits its `jobTypes` export declares), kept in the job_types table so that a producer
 * on another host, which never loads that module, knows them too (knownJobTypes).
 */
import { z } from 'zod';
import type { Executor } from './db/client';
import { log } from './log';
import { type JobTypeRegistration, jobTypesRegistered } from './queue/ops';

export interface JobTypeSpec {
  description: string;
  payload: z.ZodType;
  /**
   * How long one attempt's handler may run (ms) before its signal is aborted and the attempt
   * fails as timed out (retried, or the dead letter). Default: LEASEHOLD_JOB_TIMEOUT_MS.
   */
  timeoutMs?: number;
  /**
   * Why enqueuing this payload through the API needs the operator role, or null. For a job
   * that harms more than its own attempt: not an enqueue token's (a producer's) to send.
   */
  operatorOnly?: (payload: Record<string, unknown>) => string | null;
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
    // It kills the worker process that runs it, and every job that process holds loses an
    // attempt with it: a producer's token could dead-letter other producers' jobs at will.
    operatorOnly: (p) => (p.crash === true ? 'crash: true kills the worker process that runs it, and the other jobs it holds lose an attempt' : null),
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

/** What a producer checks a job against. */
export interface KnownJobTypes {
  /** The payload schema of a known type; undefined for a type nobody registered. */
  payloadOf(name: string): z.ZodType | undefined;
  /** Every known name, for the message that refuses an unknown one. */
  names(): string[];
}

/** A registered type that declared no payload schema takes any JSON object. */
const ANY_OBJECT = z.object({}).passthrough();

export const builtinJobTypes: KnownJobTypes = {
  payloadOf: (name) => (isJobType(name) ? jobTypes[name].payload : undefined),
  names: () => Object.keys(jobTypes),
};

/** How long a copy of the registered types serves known names before it is read again (in the background). */
export const REGISTERED_TYPES_TTL_MS = 5_000;
/** How long a name found in no registration is refused without reading again. */
export const UNKNOWN_TYPE_TTL_MS = 1_000;

interface Registry {
  readAt: number;
  payloads: Map<string, z.ZodType>;
  /** The read under way. */
  reading: Promise<void> | null;
  /** Names no registration held at the last read that looked for them: when. */
  missedAt: Map<string, number>;
}
const registries = new WeakMap<object, Registry>();
const registryOf = (key: object): Registry => {
  let r = registries.get(key);
  if (!r) registries.set(key, (r = { readAt: -Infinity, payloads: new Map(), reading: null, missedAt: new Map() }));
  return r;
};
/** The built-in types and a registry's copy of the registered ones. */
const viewOf = (reg: Registry): KnownJobTypes => ({
  payloadOf: (name) => builtinJobTypes.payloadOf(name) ?? reg.payloads.get(name),
  names: () => [...builtinJobTypes.names(), ...[...reg.payloads.keys()].filter((n) => !isJobType(n))],
});
/** Schemas rebuilt from their JSON text once, not per request. */
const fromJson = new Map<string, z.ZodType>();

/**
 * The job types producers accept, for the names about to be checked: the built-in ones
 * (never a read) and those workers registered, read from job_types through `db`. The copy
 * is kept per `cacheFor` (default `db`: a pool; a caller reading through its transaction's
 * connection keeps it per pool): a name not in it is looked up at once (so a type a worker
 * registered a moment ago is not refused on an old copy), sharing a read already under way,
 * and refused for UNKNOWN_TYPE_TTL_MS without another read (a producer looping on
 * a misspelt type costs one read a second, not one a request); a copy older than
 * REGISTERED_TYPES_TTL_MS serves as it is while a pool reads it again behind it.
 */
export async function knownJobTypes(db: Executor, names: Iterable<string>, { cacheFor = db as object } = {}): Promise<KnownJobTypes> {
  const calledAt = performance.now();
  const reg = registryOf(cacheFor);
  const view = viewOf(reg);
  const wanted = [...names].filter((n) => !isJobType(n));
  if (!wanted.length) return view;
  const unknown = wanted.filter((n) => !reg.payloads.has(n) && !((reg.missedAt.get(n) ?? -Infinity) > calledAt - UNKNOWN_TYPE_TTL_MS));
  if (unknown.length) {
    await (reg.reading ?? readRegistry(db, reg));
    if (reg.missedAt.size > 10_000) reg.missedAt.clear();
    for (const n of unknown) if (!reg.payloads.has(n)) reg.missedAt.set(n, performance.now());
  } else if (calledAt - reg.readAt > REGISTERED_TYPES_TTL_MS && !reg.reading && db === cacheFor) {
    readRegistry(db, reg).catch((err) => log.warn('could not read the registered job types; the last copy serves', { err }));
  }
  return view;
}

/** Every job type producers may enqueue, built-in and registered (the console's type filter): read again when the copy is older than REGISTERED_TYPES_TTL_MS. */
export async function allJobTypeNames(db: Executor): Promise<string[]> {
  const reg = registryOf(db);
  if (performance.now() - reg.readAt > REGISTERED_TYPES_TTL_MS) await (reg.reading ?? readRegistry(db, reg));
  return viewOf(reg).names();
}

function readRegistry(db: Executor, reg: Registry): Promise<void> {
  const startedAt = performance.now();
  const reading = (async () => {
    const rows = await jobTypesRegistered(db);
    const payloads = new Map<string, z.ZodType>();
    for (const t of rows) payloads.set(t.name, t.payloadSchema ? payloadFromJsonSchema(t.name, t.payloadSchema) : ANY_OBJECT);
    if (startedAt >= reg.readAt) [reg.payloads, reg.readAt] = [payloads, startedAt];
  })().finally(() => {
    if (reg.reading === reading) reg.reading = null;
  });
  reg.reading = reading;
  return reading;
}

function payloadFromJsonSchema(name: string, schema: Record<string, unknown>): z.ZodType {
  const text = JSON.stringify(schema);
  let zod = fromJson.get(text);
  if (!zod) {
    try {
      zod = z.fromJSONSchema(schema as never) as z.ZodType;
    } catch (err) {
      // Registration checks the round trip (registrationOf), so only a schema written some
      // other way gets here: the type stays usable, its payloads unchecked, and it is said.
      log.warn('a registered job type has a payload schema that cannot be read: its payloads are not checked', { type: name, err });
      zod = ANY_OBJECT;
    }
    fromJson.set(text, zod);
  }
  return zod;
}

/**
 * How a handlers module declares a type (its `jobTypes` export): a zod schema of the
 * payload, or a JSON Schema object; a description; its own time limit; how its failures
 * are retried.
 */
export interface JobTypeDeclaration {
  description?: string;
  payload?: z.ZodType | Record<string, unknown>;
  timeoutMs?: number;
  /**
   * Attempts of a job of this type enqueued without maxAttempts (1-100; default 3): registered
   * with the type, so every producer's jobs take it (a producer's own maxAttempts wins).
   */
  maxAttempts?: number;
  /**
   * The delay before a failed attempt's retry: exponential from `baseMs` (default 1 s),
   * doubling with each failure, at most `maxMs` (default 1 h), half of it random. A handler
   * can name the delay of one retry itself (RetryError).
   */
  backoff?: { baseMs?: number; maxMs?: number };
}

/**
 * What a worker registers for one type: the declaration with its payload schema as JSON
 * Schema (what producers rebuild it from). A schema that does not survive the trip (a zod
 * refinement, a transform) is registered as far as JSON Schema can say it, and one that
 * cannot be read back at all as none, with a warning: the handler still gets to check.
 */
export function registrationOf(name: string, d: JobTypeDeclaration | undefined): JobTypeRegistration {
  let payloadSchema: Record<string, unknown> | null = null;
  const p = d?.payload;
  if (p) {
    // Anything but an object (a string by mistake) is no schema: read as JSON Schema, it is refused below with a warning.
    const isZod = typeof p === 'object' && (p instanceof z.ZodType || '_zod' in p);
    const lossy = isZod ? lossyPart(p as z.ZodType) : null;
    if (lossy) {
      // Rebuilt from JSON Schema it would refuse payloads the handler's own schema takes.
      log.warn('the payload schema of a job type does not survive as JSON Schema: producers will not check its payloads (the handler still can)', { type: name, part: lossy });
    } else {
      try {
        payloadSchema = (isZod ? z.toJSONSchema(p as z.ZodType, { unrepresentable: 'any', io: 'input' }) : p) as Record<string, unknown>;
        z.fromJSONSchema(payloadSchema as never);
      } catch (err) {
        log.warn('the payload schema of a job type cannot be expressed as JSON Schema: producers will not check its payloads', { type: name, err });
        payloadSchema = null;
      }
    }
  }
  const timeoutMs = d?.timeoutMs !== undefined && Number.isInteger(d.timeoutMs) && d.timeoutMs > 0 ? d.timeoutMs : null;
  return { name, description: d?.description ?? null, payloadSchema, timeoutMs, maxAttempts: d?.maxAttempts ?? null };
}

/**
 * The first part of a zod schema that JSON Schema cannot carry in a way that accepts the same
 * payloads, or null: coercion and preprocessing (z.coerce, z.preprocess, a transform or pipe:
 * rebuilt, "5" would be refused where the handler's schema takes it), a fallback (.catch), a
 * regular expression with flags (dropped: /^abc$/i would refuse "ABC"), recursion (z.lazy).
 * Refinements are left out of JSON Schema altogether, which only lets more through.
 */
export function lossyPart(schema: z.ZodType, path = 'payload', depth = 0): string | null {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const def = (schema as any)?._zod?.def;
  if (!def || depth > 64) return null;
  if (def.coerce) return `${path}: z.coerce`;
  if (['pipe', 'transform', 'catch', 'lazy', 'promise', 'function'].includes(def.type)) return `${path}: ${def.type}`;
  for (const check of def.checks ?? []) {
    const pattern = check?._zod?.def?.pattern;
    if (pattern instanceof RegExp && pattern.flags) return `${path}: a pattern with flags (${pattern})`;
  }
  const children: [string, unknown][] = [];
  if (def.shape) for (const [k, v] of Object.entries(def.shape)) children.push([`${path}.${k}`, v]);
  for (const key of ['element', 'innerType', 'keyType', 'valueType', 'catchall', 'rest', 'left', 'right']) if (def[key]) children.push([path, def[key]]);
  for (const list of [def.options, def.items]) if (Array.isArray(list)) for (const v of list) children.push([path, v]);
  for (const [at, child] of children) {
    const found = lossyPart(child as z.ZodType, at, depth + 1);
    if (found) return found;
  }
  return null;
}

/** Why this built-in job's payload needs the operator role to be enqueued through the API, or null (JobTypeSpec.operatorOnly). */
export function operatorOnlyWhy(type: string, payload: Record<string, unknown>): string | null {
  const spec: JobTypeSpec | undefined = (jobTypes as Record<string, JobTypeSpec>)[type];
  return spec?.operatorOnly?.(payload) ?? null;
}
