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

/** How long a pool's copy of the registered types serves known names (an unknown one is looked up at once). */
export const REGISTERED_TYPES_TTL_MS = 5_000;

interface Registry {
  readAt: number;
  payloads: Map<string, z.ZodType>;
  reading: Promise<void> | null;
}
const registries = new WeakMap<Executor, Registry>();
/** Schemas rebuilt from their JSON text once, not per request. */
const fromJson = new Map<string, z.ZodType>();

/**
 * The job types producers accept, for the names about to be checked: the built-in ones and
 * those workers registered, read from job_types at most every REGISTERED_TYPES_TTL_MS per
 * pool — and at once for a name not known yet, so a type a worker registered a moment ago
 * is not refused on an old copy.
 */
export async function knownJobTypes(db: Executor, names: Iterable<string>): Promise<KnownJobTypes> {
  let r = registries.get(db);
  if (!r) registries.set(db, (r = { readAt: -Infinity, payloads: new Map(), reading: null }));
  const reg = r;
  const unknown = [...names].some((n) => !isJobType(n) && !reg.payloads.has(n));
  if (unknown) await readRegistry(db, reg); // a read of its own: one already under way may predate the registration
  else if (performance.now() - reg.readAt > REGISTERED_TYPES_TTL_MS) await (reg.reading ??= readRegistry(db, reg).finally(() => (reg.reading = null)));
  return {
    payloadOf: (name) => builtinJobTypes.payloadOf(name) ?? reg.payloads.get(name),
    names: () => [...builtinJobTypes.names(), ...[...reg.payloads.keys()].filter((n) => !isJobType(n))],
  };
}

async function readRegistry(db: Executor, reg: Registry) {
  const startedAt = performance.now();
  const rows = await jobTypesRegistered(db);
  const payloads = new Map<string, z.ZodType>();
  for (const t of rows) payloads.set(t.name, t.payloadSchema ? payloadFromJsonSchema(t.name, t.payloadSchema) : ANY_OBJECT);
  if (startedAt >= reg.readAt) [reg.payloads, reg.readAt] = [payloads, startedAt];
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
 * payload, or a JSON Schema object; a description; its own time limit.
 */
export interface JobTypeDeclaration {
  description?: string;
  payload?: z.ZodType | Record<string, unknown>;
  timeoutMs?: number;
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
    try {
      payloadSchema = (p instanceof z.ZodType || '_zod' in p ? z.toJSONSchema(p as z.ZodType, { unrepresentable: 'any', io: 'input' }) : p) as Record<string, unknown>;
      z.fromJSONSchema(payloadSchema as never);
    } catch (err) {
      log.warn('the payload schema of a job type cannot be expressed as JSON Schema: producers will not check its payloads', { type: name, err });
      payloadSchema = null;
    }
  }
  const timeoutMs = d?.timeoutMs !== undefined && Number.isInteger(d.timeoutMs) && d.timeoutMs > 0 ? d.timeoutMs : null;
  return { name, description: d?.description ?? null, payloadSchema, timeoutMs };
}
