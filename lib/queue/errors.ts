/**
 * Error codes shared by the queue library, the HTTP API and the CLI. Each code maps to
 * one HTTP status, once, here. Internals (SQL, stacks) are logged, never sent.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'payload_too_large'
  | 'unknown_type'
  | 'not_found'
  | 'method_not_allowed'
  | 'state_forbids'
  | 'unauthorized'
  | 'forbidden'
  | 'csrf'
  | 'rate_limited'
  | 'unavailable'
  | 'internal';

const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  payload_too_large: 413,
  unknown_type: 422,
  not_found: 404,
  method_not_allowed: 405,
  state_forbids: 409,
  unauthorized: 401,
  forbidden: 403,
  csrf: 403,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

export class QueueError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    // The name the package exports it by (lib/client.ts): what a library user's stack shows.
    this.name = 'LeaseholdError';
  }
  get httpStatus() {
    return HTTP_STATUS[this.code];
  }
  toJSON() {
    return { error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) } };
  }
}

export const httpStatusOf = (code: ErrorCode) => HTTP_STATUS[code];

export const NOT_MIGRATED = 'the database has no Leasehold tables (it is not migrated): run `npx leasehold migrate`';

/**
 * Codes the server answered a statement with for a database that is busy or going away
 * (statement timeout, shutting down, a deadlock or serialization failure): the statement
 * ended there, rolled back.
 */
const ROLLED_BACK_CODES = new Set(['57014', '57P01', '40P01', '40001']);
/** Errors before a connection was made (nothing was sent): refused, unresolvable, too many, starting up, no free connection in time. */
const NOT_CONNECTED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', '3D000', '28P01', '28000', '53300', '57P03']);
const NOT_CONNECTED = /timeout exceeded when trying to connect|Connection terminated due to connection timeout/i;
/** A connection lost or silent while a statement ran: whether it was applied is unknown. */
const NO_ANSWER = /Query read timeout|Connection terminated unexpectedly|Connection terminated$/i;

/**
 * The QueueError an error stands for: itself, or `unavailable` for a database that is busy or
 * away — saying whether anything may have been changed, which is what decides whether the
 * caller can simply retry (`readOnly`: the request only read, a preview, so nothing was);
 * null for anything else (a bug, whose details are logged, never
 * shown). Logs nothing: the caller that reports the error (an HTTP route, the CLI) does.
 */
export function knownQueueError(err: unknown, opts: { readOnly?: boolean } = {}): QueueError | null {
  if (err instanceof QueueError) return err;
  switch (statementFate(err)) {
    // One statement's fate: a request of several (a bulk action in batches) may have committed the ones before.
    case 'rolled_back':
      return new QueueError('unavailable', 'the database is busy; the statement it was running was rolled back: try again');
    case 'not_sent':
      return new QueueError('unavailable', 'the database is unreachable or has no connection free; nothing was sent to it: try again');
    // The statement named a table the database does not have: it was never migrated (or the URL names another database).
    case 'no_tables':
      return new QueueError('unavailable', NOT_MIGRATED);
    case 'unknown':
      if (opts.readOnly) return new QueueError('unavailable', 'the database stopped answering; this request only reads, so nothing was changed: try again');
      return new QueueError('unavailable', OUTCOME_UNKNOWN + ' (an enqueue with an idempotencyKey is safe to retry)');
    default:
      return null;
  }
}

/** What became of what was asked when the database stopped answering mid-statement. */
export const OUTCOME_UNKNOWN = 'the database stopped answering: what was asked may or may not have been done. Read it back before retrying';

/**
 * What a database error says of the statement it ended: `rolled_back` (the server refused or
 * ended it: busy, shutting down, a deadlock), `not_sent` (no connection was made), `no_tables`
 * (not migrated), `unknown` (the connection was lost or went silent while it ran: it may
 * have committed); null for anything else.
 */
export function statementFate(err: unknown): 'rolled_back' | 'not_sent' | 'no_tables' | 'unknown' | null {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown[] } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : '';
  if (ROLLED_BACK_CODES.has(code)) return 'rolled_back';
  if (NOT_CONNECTED_CODES.has(code) || NOT_CONNECTED.test(message) ||
      (Array.isArray(e?.errors) && e.errors.length > 0 && e.errors.every((x) => NOT_CONNECTED_CODES.has((x as { code?: string })?.code ?? ''))))
    return 'not_sent';
  if (code === '42P01') return 'no_tables';
  if (code === 'ECONNRESET' || code === 'ETIMEDOUT' || code === 'EPIPE' || NO_ANSWER.test(message)) return 'unknown';
  return null;
}

/**
 * What a handler's error asks of the worker, carried as a mark under a registered symbol
 * rather than read with instanceof: a handlers module imports these classes from the package
 * (client.mjs), which loads its own copy of this file, so its classes are not the worker's.
 */
const VERDICT = Symbol.for('leasehold.handlerError');

/**
 * A handler throws this to fail the job at once, without retries (bad input that no
 * retry can fix). Any other error is retried while attempts are left.
 */
export class PermanentError extends Error {
  readonly [VERDICT] = 'permanent';
  constructor(message: string) {
    super(message);
    this.name = 'PermanentError';
  }
}

/** The longest delay a RetryError or a SnoozeError may ask for (the database's int milliseconds: about 24.8 days). */
export const RETRY_AFTER_MAX_MS = 2_147_483_647;

/**
 * What RetryError and SnoozeError share: a delay, checked where the handler builds the error.
 * One that did not parse (a missing Retry-After) throws there, so its job fails and backs off
 * as for any error instead of running again at once.
 */
abstract class DelayedVerdict extends Error {
  readonly afterMs: number;
  constructor(name: 'RetryError' | 'SnoozeError', message: string, opts: { afterMs: number } | undefined) {
    super(message);
    this.name = name;
    const after = opts?.afterMs;
    if (typeof after !== 'number' || Number.isNaN(after) || after < 0) {
      throw new TypeError(`${name}: afterMs must be a number of milliseconds, 0 or more (got ${String(after)})`);
    }
    this.afterMs = after;
  }
}

/**
 * A handler throws this to fail the attempt and be retried after `afterMs` instead of the
 * type's backoff: an upstream's 429 with a Retry-After, a resource known to be back at a
 * given time. The attempt counts; with none left the job goes to the dead letter as any
 * failure does.
 */
export class RetryError extends DelayedVerdict {
  readonly [VERDICT] = 'retry';
  constructor(message: string, opts: { afterMs: number }) {
    super('RetryError', message, opts);
  }
}

/**
 * A handler throws this to put its job off without a verdict: it runs again after `afterMs`,
 * and the attempt is given back (not the job's fault: "the export is not ready yet", "the
 * account is locked until noon"). Recorded as `snoozed` in the job's attempts; a snooze after
 * an operator asked to cancel ends the job as cancelled. Unlike a RetryError it spends no
 * attempt, so a job may snooze any number of times: mind a handler that always does.
 */
export class SnoozeError extends DelayedVerdict {
  readonly [VERDICT] = 'snooze';
  constructor(message: string, opts: { afterMs: number }) {
    super('SnoozeError', message, opts);
  }
}

/**
 * A thrown value as the worker acts on it: a failure for good, a retry at a given delay or the
 * backoff's (afterMs null), or a snooze (a delay, the attempt given back).
 */
export function handlerVerdict(err: unknown): { permanent: boolean; afterMs: number | null; snooze: boolean } {
  const mark = (err as { [VERDICT]?: unknown } | null)?.[VERDICT];
  if (mark === 'permanent') return { permanent: true, afterMs: null, snooze: false };
  if (mark !== 'retry' && mark !== 'snooze') return { permanent: false, afterMs: null, snooze: false };
  const after = (err as RetryError | SnoozeError).afterMs;
  // A delay that is not a number is no request (an object made to look like one): a failure,
  // backing off as the type says.
  if (typeof after !== 'number' || Number.isNaN(after)) return { permanent: false, afterMs: null, snooze: false };
  return { permanent: false, afterMs: Math.round(Math.min(Math.max(after, 0), RETRY_AFTER_MAX_MS)), snooze: mark === 'snooze' };
}
