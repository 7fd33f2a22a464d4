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
    this.name = 'QueueError';
  }
  get httpStatus() {
    return HTTP_STATUS[this.code];
  }
  toJSON() {
    return { error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) } };
  }
}

export const httpStatusOf = (code: ErrorCode) => HTTP_STATUS[code];

/**
 * Codes of a database that is busy or away (statement timeout, too many connections, server
 * shutting down, connection refused): worth telling apart from a bug.
 */
const UNAVAILABLE_CODES = new Set(['57014', '53300', '57P01', 'ECONNREFUSED']);

/**
 * The QueueError an error stands for: itself, or `unavailable` for a database that is busy or
 * away; null for anything else (a bug, whose details are logged, never shown). Logs nothing:
 * the caller that reports the error (an HTTP route, the CLI) does.
 */
export function knownQueueError(err: unknown): QueueError | null {
  if (err instanceof QueueError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) {
    return new QueueError('unavailable', 'the database is busy or unreachable; try again');
  }
  return null;
}

/**
 * A handler throws this to fail the job at once, without retries (bad input that no
 * retry can fix). Any other error is retried while attempts are left.
 */
export class PermanentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentError';
  }
}
