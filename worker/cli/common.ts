/**
 * What every verb of `npx leasehold` shares: exit codes, opening and closing the database
 * and the doorbell, mapping errors to exit codes, tables, JSON output, progress bars.
 */
import { InvalidArgumentError } from 'commander';
import { audited, type AuditOutcome, type AuditStart, processActor } from '../../lib/audit/log';
import cliProgress, { SingleBar } from 'cli-progress';
import Table from 'cli-table3';
import type pg from 'pg';
import { ZodError, type ZodType } from 'zod';
import { loadConfig } from '../../lib/config';
import { createPool, type Executor, isUnreachable } from '../../lib/db/client';
import { schemaProblem } from '../../lib/db/schema-version';
import { builtinJobTypes, type KnownJobTypes, knownJobTypes } from '../../lib/job-types';

// Where verbs import it from.
export { isUnreachable };
import { reasonText } from '../../lib/http/schemas';
import { createLogger } from '../../lib/log';
import { knownQueueError, NOT_MIGRATED, QueueError, statementFate } from '../../lib/queue/errors';
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
  /** PostgreSQL could not be reached, was busy (the statement was rolled back), or is not at this build's schema. */
  unreachable: 3,
  /** PostgreSQL stopped answering while a write ran: it may or may not have been done. */
  outcomeUnknown: 4,
  /** An unexpected error: a bug (the message says where). */
  internal: 70,
} as const;

export const EXIT_CODES_HELP = `
Exit codes:
  0   done
  1   refused for some or all items (their state forbids it, or no such job)
  2   bad usage or invalid input (nothing done for what was invalid)
  3   the database is unreachable or busy (nothing done: try again), or not
      migrated to this build (older or newer)
  4   the database stopped answering during a write: it may or may not be
      done (read it back before retrying)
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

/**
 * How long one of the command line's statements may run (server-side; the client gives up 10 s
 * later on a connection gone silent). Its writes are the console's batches (the console
 * allows 20 s); a verb behind a lock someone holds ends with "busy: try again" instead of
 * waiting in silence for ever.
 */
const CLI_STATEMENT_TIMEOUT_MS = 30_000;

/** An error with the exit code it stands for, where that is not its QueueError code's. */
class ExitError extends QueueError {
  constructor(
    from: QueueError,
    readonly exit: number,
  ) {
    super(from.code, from.message);
  }
}

/**
 * Opens what a verb needs, runs it, and closes everything (also when it throws). Refuses a
 * database not at this build's schema before anything is read or written. `reads`: the verb
 * only reads, so a database that stops answering under it has changed nothing.
 */
export async function withQueue<T>(fn: (q: Queue) => Promise<T>, o: { reads?: boolean } = {}): Promise<T> {
  const cfg = loadConfig();
  const services = await resolveServices(cfg, log);
  const pool = createPool(services.databaseUrl, { name: 'cli', max: 4, statementTimeoutMs: CLI_STATEMENT_TIMEOUT_MS, queryTimeoutMs: CLI_STATEMENT_TIMEOUT_MS + 10_000 });
  let doorbell: Doorbell | null = null;
  try {
    const problem = await schemaProblem(pool);
    if (problem) throw new QueueError('unavailable', problem);
    doorbell = services.redisUrl ? new RedisDoorbell(services.redisUrl, cfg.redisPrefix, pool, log) : new PgDoorbell(pool, log);
    await redisSettled(doorbell, 2_000); // unreachable: the doorbell falls back to NOTIFY
    try {
      return await fn({ pool, doorbell, redisUrl: services.redisUrl, redisPrefix: cfg.redisPrefix });
    } catch (err) {
      // Said as the API says it: busy (rolled back: try again), or lost mid-statement, where a
      // write may have been done (exit 4: a script that retries on 3 would do it twice).
      const fate = statementFate(err);
      if (fate === 'unknown' && !o.reads) throw new ExitError(knownQueueError(err)!, EXIT.outcomeUnknown);
      if (fate === 'rolled_back' || fate === 'unknown') throw knownQueueError(err, { readOnly: o.reads })!;
      throw err;
    }
  } finally {
    if (doorbell instanceof RedisDoorbell) await doorbell.close();
    await pool.end();
    await services.embedded?.stop();
  }
}

/** withQueue for a verb that only reads. */
export const withQueueReadOnly = <T>(fn: (q: Queue) => Promise<T>) => withQueue(fn, { reads: true });

/** The exit code for an error thrown by a verb, after printing it. */
export function reportError(err: unknown): number {
  // Messages can quote what was asked for or found (a name, a worker id): visible().
  if (err instanceof ExitError) {
    console.error(`leasehold: ${visible(err.message)}`);
    return err.exit;
  }
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
export function progressBar(enabled: boolean, o: { label: string; total: number | null; unit?: string; format?: string; payload?: Record<string, unknown> }): Progress {
  if (!enabled) return { update: () => {}, stop: () => {} };
  const unit = o.unit ? ` ${o.unit}` : '';
  const bar = new SingleBar({
    stream: process.stderr,
    noTTYOutput: !process.stderr.isTTY, // --progress into a pipe: a line per second, no cursor games
    notTTYSchedule: 1_000,
    hideCursor: true,
    // cli-progress gives an ETA it cannot work out yet as the text 'NULL' (or 'INF'), which its
    // own formatter cut to "LLs": said as unknown instead.
    formatTime: (t, options, roundTo) => (typeof t === 'number' ? cliProgress.Format.TimeFormat(t, options, roundTo) : '?'),
    format:
      o.format ??
      (o.total === null
        ? `${o.label} {value}${unit} | {duration_formatted}`
        : `${o.label} [{bar}] {percentage}% | {value}/{total}${unit} | ETA {eta_formatted}`),
  });
  // The format's own fields ({jobs}) start at their first values: unset, a line showed "{jobs}".
  bar.start(o.total ?? 0, 0, o.payload);
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
