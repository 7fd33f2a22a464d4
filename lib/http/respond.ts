/**
 * Route handler plumbing: every handler runs inside `route()`, which turns a QueueError
 * into its status and `{"error":{"code","message"}}`, a validation error into a 400 that
 * names the field, and anything unexpected into a logged, generic 500 (no stack, no SQL).
 */
import { ZodError } from 'zod';
import { log } from '../log';
import { knownQueueError, QueueError } from '../queue/errors';
import { isJobIdText } from '../queue/job';
import { underflowingNumber, underflowText } from '../queue/text';
import { authorize } from '../auth/gate';
import type { Principal, Requirement } from '../auth/roles';
import { invalidateStats } from '../server/context';
import { readCache } from '../server/read-cache';

export const json = (data: unknown, status = 200, headers?: HeadersInit) =>
  Response.json(data, { status, headers: { 'cache-control': 'no-store', ...headers } });

export const errorResponse = (e: QueueError) => json(e.toJSON(), e.httpStatus);

export function zodMessage(e: ZodError): string {
  const first = e.issues[0];
  if (!first) return 'invalid request';
  // Array indexes as [3] ("[3].type"), fields dotted.
  const path = first.path.map((p, k) => (typeof p === 'number' ? `[${p}]` : `${k ? '.' : ''}${String(p)}`)).join('');
  // An unknown key is named, not the object it is in (which may be a query string, not a body).
  if (first.code === 'unrecognized_keys') {
    const keys = first.keys.map((k) => JSON.stringify(k)).join(', ');
    return `${path ? `${path}: ` : ''}unknown field${first.keys.length > 1 ? 's' : ''} ${keys}`;
  }
  return `${path || 'body'}: ${first.message}`;
}

export const toErrorResponse = (err: unknown, opts: { readOnly?: boolean } = {}): Response => errorResponse(toQueueError(err, opts));

/** What a caller is told about an error: its own QueueError, a 400 naming the field, or a logged, generic one. */
export function toQueueError(err: unknown, opts: { readOnly?: boolean } = {}): QueueError {
  if (err instanceof ZodError) return new QueueError('invalid_request', zodMessage(err));
  const known = knownQueueError(err, opts);
  if (known?.code === 'unavailable' && !(err instanceof QueueError)) {
    const code = (err as { code?: string }).code;
    // A missing table is also what a bug naming a wrong one, or code newer than its migrations, looks like: which table, said.
    log.warn('database unavailable for a request', code === '42P01' ? { code, err } : { code });
  }
  if (known) return known;
  log.error('unexpected error in a route handler', { err, stack: (err as Error)?.stack });
  return new QueueError('internal', 'internal error (logged on the server)');
}

/**
 * Every route handler: `route(need, handler)`. `need` is what the caller must be (lib/auth/roles.ts:
 * 'public', 'enqueue', 'viewer', 'operator' or 'admin'); the gate answers 401/403 before the
 * handler runs, and the handler gets who is asking (for the audit log).
 */
/**
 * What a handler said of its request: it changed no job (a preview, a saved view: the shared
 * reads stay cached), or it only reads (a dry run: a lost answer changed nothing, so an error
 * says a retry is safe — which implies the first).
 */
const marked = new WeakMap<Request, 'changed-nothing' | 'read-only'>();

/** Tells route() that this operator request changed no job (a preview, a saved view), so the shared reads stay cached. */
export function markChangedNothing(req: Request) {
  if (!marked.has(req)) marked.set(req, 'changed-nothing');
}

/** Tells route() that this request writes nothing at all (markChangedNothing too), so an error says a retry is safe. */
export function markReadOnly(req: Request) {
  marked.set(req, 'read-only');
}

export function route<C = unknown>(need: Requirement, fn: (req: Request, ctx: C, who: Principal) => Promise<Response>) {
  // Both parameters optional so that tests may call a handler as `GET()`; Next always passes them.
  return async (req?: Request, ctx?: C): Promise<Response> => {
    const request = req ?? new Request('http://localhost/');
    let acted = false;
    try {
      const who = await authorize(request, need);
      // A write's options travel in its body; no POST of this API reads the query string.
      // One given there (POST /api/recover?dryRun=true) is refused, never run as if absent.
      if (request.method !== 'GET' && request.method !== 'HEAD') noQuery(request);
      acted = (need === 'operator' || need === 'admin') && request.method !== 'GET' && request.method !== 'HEAD';
      return await fn(request, ctx as C, who ?? ANONYMOUS);
    } catch (err) {
      return toErrorResponse(err, { readOnly: request.method === 'GET' || request.method === 'HEAD' || marked.get(request) === 'read-only' });
    } finally {
      // What an operator's action through this console changed shows in its lists and on
      // the overview at once, not after their shared second (lib/server/read-cache.ts) or
      // the stats' refresh interval (lib/queue/stats-cache.ts) — even if it failed halfway.
      // Not for enqueues, sign-ins, previews or refused requests: those would keep the
      // caches empty under load, when they are needed most.
      if (acted && !marked.has(request)) {
        readCache.clear();
        invalidateStats();
      }
    }
  };
}

/** Who a public route's handler sees when nobody is signed in. */
const ANONYMOUS: Principal = { kind: 'anonymous', name: 'anonymous', role: null, enqueue: false, via: 'off' };

export const MAX_BODY_BYTES = 1024 * 1024 + 64 * 1024;
/**
 * POST /api/jobs: the limit that matters is each payload's (1 MiB as stored, checked once
 * parsed); the body around it may be larger — an array of up to 1000 jobs, or escapes such as
 * \u00e9 (what Python's json.dumps writes) that spell one stored character in six bytes.
 */
export const MAX_ENQUEUE_BODY_BYTES = 16 * 1024 * 1024;

/** Reads a JSON body of at most `limit` bytes; 413 above it, 400 when it is not JSON. */
export async function readJson(req: Request, limit = MAX_BODY_BYTES, optional = false): Promise<unknown> {
  // Read as it came: a compressed body would otherwise be refused as "not valid UTF-8".
  const encoding = req.headers.get('content-encoding')?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    throw new QueueError('invalid_request', `request body is compressed (Content-Encoding: ${encoding.slice(0, 40)}): send it uncompressed`);
  }
  const declared = Number(req.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    throw new QueueError('payload_too_large', `request body is over ${limit} bytes`);
  }
  if (!req.body) {
    if (optional) return {};
    throw new QueueError('invalid_request', 'request body is empty: send JSON');
  }
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new QueueError('payload_too_large', `request body is over ${limit} bytes`);
    }
    chunks.push(value);
  }
  let text: string;
  try {
    // Strictly: a lenient decode turns each invalid byte into U+FFFD, so two different keys
    // (an idempotency key sent as Latin-1, say) would be stored, and deduplicated, as one.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(Buffer.concat(chunks));
  } catch {
    throw new QueueError('invalid_request', 'request body is not valid UTF-8: send JSON in UTF-8');
  }
  if (!text.trim() && optional) return {};
  if (!text.trim()) throw new QueueError('invalid_request', 'request body is empty: send JSON');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new QueueError('invalid_request', `request body is not valid JSON (${(e as Error).message})`);
  }
  const tiny = underflowingNumber(text);
  if (tiny) throw new QueueError('invalid_request', `request body ${underflowText(tiny)}`);
  return body;
}

/**
 * The query string, one value per name. A name given twice is a 400 naming it: no query
 * parameter of this API is a list (ids are comma-separated), and taking the last value
 * silently (what Object.fromEntries does) would answer a question nobody asked.
 */
export function readQuery(req: Request): Record<string, string> {
  const url = new URL(req.url);
  // Strictly, as paths are read: URLSearchParams turns a bad escape (%E9, a Latin-1 "é") into
  // U+FFFD, and a filter would then quietly search for something nobody typed.
  for (const part of url.search.slice(1).split(/[&=]/)) {
    try {
      decodeURIComponent(part.replace(/\+/g, ' '));
    } catch {
      throw new QueueError('invalid_request', 'the query string is not valid percent-encoded UTF-8');
    }
  }
  const params = url.searchParams;
  for (const k of new Set(params.keys())) {
    if (params.getAll(k).length > 1) throw new QueueError('invalid_request', `${k.slice(0, 64)}: given more than once (each query parameter takes one value)`);
  }
  return Object.fromEntries(params);
}

/**
 * A list's query (readQuery) with the parameters it takes left out when given empty:
 * `?status=&queue=mail` (the contract's own spelling of GET /api/jobs, or a form's untouched
 * field) filters by queue only, as the console's /jobs page reads it (lib/api/filters.ts). A
 * name it does not take stays, empty or not, for its schema to refuse.
 */
export function readListQuery(req: Request, takes: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(readQuery(req)).filter(([k, v]) => v !== '' || !takes.includes(k)));
}

/**
 * For an endpoint that takes no query parameters (or only `allowed` flags): any other is a
 * 400, as on the endpoints that take some, so a script that thinks it filtered (GET
 * /api/dead-letter?queue=mail) learns it did not.
 */
export function noQuery(req: Request, allowed: readonly string[] = []): void {
  const params = readQuery(req);
  const unknown = Object.keys(params).find((k) => !allowed.includes(k));
  if (unknown !== undefined) {
    const takes = allowed.length ? `it takes only ${allowed.join(', ')}` : 'it takes none';
    throw new QueueError('invalid_request', `${unknown.slice(0, 64)}: unknown query parameter (${takes})`);
  }
}

/** A job id from a path: a positive 64-bit integer, or a 404. */
export function parseJobId(raw: string): string {
  if (!isJobIdText(raw)) {
    throw new QueueError('not_found', `no job with id ${JSON.stringify(raw.slice(0, 40))}`);
  }
  return raw;
}

/** Like readJson, but an empty body is `{}` (action endpoints take optional options). */
export function readJsonOptional(req: Request, limit = 64 * 1024): Promise<unknown> {
  return readJson(req, limit, true);
}
