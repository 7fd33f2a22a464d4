/**
 * What every verb of `npx leasehold` shares: exit codes, opening and closing the database
 * and the doorbell, mapping errors to exit codes, tables, JSON output, progress bars.
 */
import { InvalidArgumentError } from 'commander';
import { audited, type AuditOutcome, type AuditStart, processActor } from '../../lib/audit/log';
import { SingleBar } from 'cli-progress';
import Table from 'cli-table3';
import type pg from 'pg';
import { ZodError, type ZodType } from 'zod';
import { loadConfig } from '../../lib/config';
import { createPool, type Executor, isUnreachable } from '../../lib/db/client';
import { builtinJobTypes, type KnownJobTypes, knownJobTypes } from '../../lib/job-types';

// Where verbs import it from.
export { isUnreachable };
import { reasonText } from '../../lib/http/schemas';
import { createLogger } from '../../lib/log';
import { NOT_MIGRATED, QueueError } from '../../lib/queue/errors';
import { isJobIdText } from '../../lib/queue/job';
import { underflowingNumber, underflowText } from '../../lib/queue/text';
import { type Doorbell, PgDoorbell, RedisDoorbell } from '../../lib/queue/signal';
import { redisSettled } from '../../lib/redis-settled';
import { visible } from '../../lib/ui/visible';
import { configErrorText, resolveServices } from '../bootstrap';

/** Exit codes scripts can rely on (also in `--help` and the README). */
export const EXIT = {
  /** Everything asked for was done. */
  ok: 0,
  /** The action was refused for some or all items (their state forbids it, or no such job). */
  refused: 1,
  /** Bad usage or invalid input: nothing was done for what was invalid. */
  usage: 2,
  /** PostgreSQL could not be reached (or refused the connection). */
  unreachable: 3,
  /** An unexpected error: a bug (the message says where). */
  internal: 70,
} as const;

export const EXIT_CODES_HELP = `
Exit codes:
  0   done
  1   refused for some or all items (their state forbids it, or no such job)
  2   bad usage or invalid input (nothing done for what was invalid)
  3   the database is unreachable, not migrated, or migrated by a newer build
  70  unexpected error (a bug)`;

/** A verb's help after its options: examples, then the exit codes. */
export const examplesHelp = (...examples: string[]) => `\nExamples:\n${examples.map((e) => `  ${e}`).join('\n')}\n${EXIT_CODES_HELP}`;

export const log = createLogger({ role: 'cli' });

export interface Queue {
  pool: pg.Pool;
  doorbell: Doorbell;
  redisUrl: string | null;
  redisPrefix: string;
}

/**
 * The job types a verb checks jobs against: the built-in ones, without touching the
 * database, and, once a job names another, those workers registered (read through `db`,
 * which may open the database only then: a dry run of built-in types needs none). A name
 * still unknown after a lookup is not looked up again: a file of a million lines naming
 * one unknown type costs one read.
 */
export function jobTypesFrom(db: () => Promise<Executor>): (name: unknown) => Promise<KnownJobTypes> {
  let known: KnownJobTypes = builtinJobTypes;
  const missing = new Set<string>();
  return async (name) => {
    if (typeof name === 'string' && !known.payloadOf(name) && !missing.has(name)) {
      known = await knownJobTypes(await db(), [name]);
      if (!known.payloadOf(name)) missing.add(name);
    }
    return known;
  };
}

/**
 * A database connection opened only if a verb turns out to need one (a dry run that meets
 * a registered job type); close() is a no-op otherwise.
 */
export function lazyDatabase(): { get(): Promise<Executor>; close(): Promise<void> } {
  let opened: Promise<{ pool: pg.Pool; stop(): Promise<void> }> | null = null;
  return {
    async get() {
      opened ??= (async () => {
        const services = await resolveServices(loadConfig(), log);
        const pool = createPool(services.databaseUrl, { name: 'cli', max: 1 });
        return {
          pool,
          async stop() {
            await pool.end();
            await services.embedded?.stop();
          },
        };
      })();
      return (await opened).pool;
    },
    async close() {
      if (opened) await (await opened.catch(() => null))?.stop();
    },
  };
}

/** Opens what a verb needs, runs it, and closes everything (also when it throws). */
export async function withQueue<T>(fn: (q: Queue) => Promise<T>): Promise<T> {
  const cfg = loadConfig();
  const services = await resolveServices(cfg, log);
  const pool = createPool(services.databaseUrl, { name: 'cli', max: 4 });
  const doorbell: Doorbell = services.redisUrl
    ? new RedisDoorbell(services.redisUrl, cfg.redisPrefix, pool, log)
    : new PgDoorbell(pool, log);
  await redisSettled(doorbell, 2_000); // unreachable: the doorbell falls back to NOTIFY
  try {
    return await fn({ pool, doorbell, redisUrl: services.redisUrl, redisPrefix: cfg.redisPrefix });
  } finally {
    if (doorbell instanceof RedisDoorbell) await doorbell.close();
    await pool.end();
    await services.embedded?.stop();
  }
}

/** The exit code for an error thrown by a verb, after printing it. */
export function reportError(err: unknown): number {
  // Messages can quote what was asked for or found (a name, a worker id): visible().
  if (err instanceof QueueError) {
    console.error(`leasehold: ${visible(err.message)}`);
    return err.code === 'not_found' || err.code === 'state_forbids' ? EXIT.refused : err.code === 'unavailable' ? EXIT.unreachable : EXIT.usage;
  }
  if (err instanceof InvalidArgumentError) {
    console.error(`leasehold: ${visible(err.message)}`);
    return EXIT.usage;
  }
  // Input a verb validated with parse() rather than safeParse(): bad input, not a bug.
  if (err instanceof ZodError) {
    console.error(`leasehold: ${visible(issueText(err.issues))}`);
    return EXIT.usage;
  }
  if (isUnreachable(err)) {
    console.error(`leasehold: cannot reach the database: ${visible((err as Error).message || (err as { code?: string }).code || '')}`);
    return EXIT.unreachable;
  }
  const config = configErrorText(err);
  if (config) {
    console.error(config);
    return EXIT.usage;
  }
  if ((err as { code?: string })?.code === '42P01') {
    console.error(`leasehold: ${NOT_MIGRATED}`);
    return EXIT.unreachable;
  }
  console.error(`leasehold: unexpected error: ${((err as Error)?.stack ?? String(err)).split('\n').map((line) => visible(line)).join('\n')}`);
  return EXIT.internal;
}

/** Raise the process's exit code to at least `code` (0 < 1 < 2 ...), never lower it. */
export function exitAtLeast(code: number) {
  if (code > Number(process.exitCode ?? 0)) process.exitCode = code;
}

// ---------------------------------------------------------------- argument parsers

export const jobIdArg = (v: string) => {
  if (!isJobIdText(v)) throw new InvalidArgumentError('a job id is a positive integer');
  return v;
};

export const jobIdsArg = (v: string, prev: string[] = []) => [...prev, jobIdArg(v)];

export const intArg = (min: number, max: number) => (v: string) => {
  const n = Number(v);
  if (!/^-?\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
  }
  return n;
};

/** An argument checked by the API's own schema for it, refused with the schema's message. */
export const schemaArg = (schema: ZodType<string>) => (v: string) => {
  const r = schema.safeParse(v);
  if (!r.success) throw new InvalidArgumentError(r.error.issues[0]!.message);
  return v;
};

/** --reason: what the API takes (at most 500 characters, text PostgreSQL can store). */
export const reasonArg = schemaArg(reasonText);

export const jsonArg = (what: string) => (v: string) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    throw new InvalidArgumentError(`${what} must be JSON`);
  }
  // As the API's body check: 1e-400 would be stored as 0, a value never sent.
  const tiny = underflowingNumber(v);
  if (tiny) throw new InvalidArgumentError(`${what} ${underflowText(tiny)}`);
  return parsed;
};

/** `path: message` of a zod error's first issue, prefixed by where. */
/**
 * An error about a field, named by the flag the operator typed (`--run-at: …`) rather than the
 * API's field (`runAt: …`). Own properties only: a message beginning "constructor:" names no flag.
 */
export function namedByFlag(message: string, flags: Readonly<Record<string, string>>): string {
  const field = /^(\w+):/.exec(message)?.[1];
  return field !== undefined && Object.hasOwn(flags, field) ? flags[field] + message.slice(field.length) : message;
}

export function issueText(issues: readonly { path: PropertyKey[]; message: string }[], where = ''): string {
  const i = issues[0];
  if (!i) return `${where || 'input'}: invalid`;
  const at = [where, ...i.path.map(String)].filter(Boolean).join('.');
  return `${at || 'input'}: ${i.message}`;
}

// ---------------------------------------------------------------- output

export function printJson(v: unknown) {
  process.stdout.write(JSON.stringify(v) + '\n');
}

/**
 * Text from the queue as it may reach a terminal goes through `visible` (lib/ui/visible.ts):
 * control characters, the bidirectional controls and the line separators shown as escapes.
 * --json needs nothing (JSON.stringify escapes the controls, and the bidirectional ones are
 * plain characters to a JSON reader).
 */
export { visible };

/** A plain table on stdout (no colours: it is read by people and pasted into tickets). */
export function printTable(head: string[], rows: (string | number | null | undefined)[][]) {
  const t = new Table({ head, style: { head: [], border: [], compact: true } });
  for (const r of rows) t.push(r.map((c) => (c === null || c === undefined ? '—' : visible(String(c)))));
  process.stdout.write(t.toString() + '\n');
}

export const ago = (ms: number | null) => (ms === null ? '—' : ms < 1000 ? `${Math.round(ms)} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`);
export const time = (iso: string | Date | null) => (iso === null ? null : (typeof iso === 'string' ? iso : iso.toISOString()).replace('T', ' ').replace(/\.\d+Z$/, 'Z'));

/** --progress / --no-progress: default on when stderr is a terminal. */
export function progressEnabled(opt: boolean | undefined) {
  return opt ?? !!process.stderr.isTTY;
}

export interface Progress {
  update(value: number, payload?: Record<string, unknown>): void;
  stop(): void;
}

/**
 * A progress bar on stderr (cli-progress), or a no-op when disabled. `total` null: no
 * bar, only the count and the time so far.
 */
export function progressBar(enabled: boolean, o: { label: string; total: number | null; unit?: string; format?: string }): Progress {
  if (!enabled) return { update: () => {}, stop: () => {} };
  const unit = o.unit ? ` ${o.unit}` : '';
  const bar = new SingleBar({
    stream: process.stderr,
    noTTYOutput: !process.stderr.isTTY, // --progress into a pipe: a line per second, no cursor games
    notTTYSchedule: 1_000,
    hideCursor: true,
    format:
      o.format ??
      (o.total === null
        ? `${o.label} {value}${unit} | {duration_formatted}`
        : `${o.label} [{bar}] {percentage}% | {value}/{total}${unit} | ETA {eta_formatted}`),
  });
  bar.start(o.total ?? 0, 0);
  return {
    update: (value, payload) => bar.update(value, payload),
    stop: () => bar.stop(),
  };
}

// ---------------------------------------------------------------- audit

/** Who ran this command: the OS user on this host (the CLI trusts whoever holds the database URL). */
export const cliActor = processActor;

/** A CLI action inside its audit entry (actor kind `cli`; see `audited`). */
export function auditCli<R>(db: pg.Pool, start: AuditStart, run: () => Promise<R>, outcome: (result: R) => AuditOutcome): Promise<R> {
  return audited(db, { actor: cliActor(), actorKind: 'cli' }, start, run, outcome);
}
