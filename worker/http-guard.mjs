/**
 * Preloaded into the console's `next start` process (node --import), in front of Next:
 *  - a request whose path is not valid percent-encoded UTF-8 (`/api/jobs/%E0%A4%A`) gets a
 *    400 with the API's error shape, where Next's router otherwise fails on it with a bare
 *    500 before proxy.ts or any route handler runs (vercel/next.js#92527, open at Next 16.4);
 *    so does an API request whose query string is not (`/api/jobs?queue=%E9`): Next decodes
 *    and re-encodes the query before a handler sees it, a bad escape turned into U+FFFD, and
 *    a filter would quietly search for what nobody typed (readQuery's own check, in
 *    lib/http/respond.ts, only serves handlers called without Next, as the tests call them);
 *  - a method Next has no handler for (TRACE: a 500 as text; PROPFIND…) gets a 405, and one Node cannot
 *    parse, or headers over its limit, the API's error shape instead of a bare 400 or 431;
 *  - every request carries the TCP peer's address in PEER_HEADER, overwriting whatever the
 *    client sent under that name: route handlers see only a Request, and the sign-in limit
 *    per address must not key on a header the client chose (lib/auth/rate-limit.ts), which
 *    trusts the header only where this guard left its mark on globalThis;
 *  - when the process that started the console goes away, the console stops (SIGTERM to
 *    itself, so Next closes as it would on a signal) instead of serving on as an orphan;
 *  - a closed output pipe does not end it at its next log line (lost-output.mjs).
 */
import http from 'node:http';
import { outliveLostOutput } from './lost-output.mjs';
import { watchParent } from './parent-watch.mjs';

watchParent(() => process.kill(process.pid, 'SIGTERM'));
outliveLostOutput();

const PEER_HEADER = 'x-leasehold-peer'; // read by lib/auth/rate-limit.ts (PEER_HEADER there)
// Tells lib/auth/rate-limit.ts (PEER_GUARD there) that PEER_HEADER can be trusted in this process.
globalThis[Symbol.for('leasehold.http-guard')] = true;

const decodes = (text) => {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
};

/** Why the URL cannot be read as the API reads it (null: it can). */
function undecodable(url) {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!decodes(path)) return 'the path is not valid percent-encoded UTF-8';
  // Each name and value on its own, as readQuery decodes them ('+' is a space there).
  if (q >= 0 && path.startsWith('/api/') && !url.slice(q + 1).split(/[&=]/).every((part) => decodes(part.replace(/\+/g, ' ')))) {
    return 'the query string is not valid percent-encoded UTF-8';
  }
  return null;
}

// DATA_CSP of lib/http/security-headers.ts (this file is loaded before TypeScript is).
const ERROR_HEADERS = {
  'content-type': 'application/json',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};
const errorBody = (code, message) => JSON.stringify({ error: { code, message } });

/**
 * Node refuses some requests before any handler runs, with a bare status and no body: its
 * headers (the URL among them) over its limit (431), a method it cannot parse (`PROPFIND`,
 * a lowercase `get`: 400). Answered here in the API's error shape, on the raw socket.
 */
function refuseOnSocket(socket, status, code, message) {
  const body = errorBody(code, message);
  const head = Object.entries(ERROR_HEADERS).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  // Closed once written, as Node closes it after its own answer (the server allows half-open sockets).
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nconnection: close\r\n${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, () =>
    socket.destroy(),
  );
}

const PARSER_REFUSALS = {
  HPE_HEADER_OVERFLOW: [431, 'payload_too_large', `the request's headers, its URL among them, are over ${http.maxHeaderSize} bytes`],
  HPE_INVALID_METHOD: [400, 'invalid_request', 'not an HTTP method this server knows'],
};

/**
 * Methods Node parses but Next has no handler for: it answers TRACE (and PROPFIND, LOCK…)
 * with a 500 and "Internal Server Error" as text. The console's routes take these.
 */
const SERVED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, res, ...rest) {
  // clientError's arguments are (error, socket); a socket with a response under way is left to
  // Node (the condition Node's own answer checks).
  const refusal = event === 'clientError' ? PARSER_REFUSALS[req?.code] : undefined;
  if (refusal && res?.writable && !res._httpMessage?._headerSent) {
    refuseOnSocket(res, ...refusal);
    return true;
  }
  if (event === 'request' && typeof req?.method === 'string' && !SERVED_METHODS.has(req.method)) {
    res.writeHead(405, { ...ERROR_HEADERS, allow: [...SERVED_METHODS].join(', ') });
    res.end(errorBody('method_not_allowed', `${req.method} is not served by this console`));
    return true;
  }
  const problem = event === 'request' && typeof req?.url === 'string' ? undecodable(req.url) : null;
  if (problem) {
    res.writeHead(400, ERROR_HEADERS);
    res.end(errorBody('invalid_request', problem));
    return true;
  }
  if (event === 'request' && req?.headers) req.headers[PEER_HEADER] = req.socket?.remoteAddress ?? 'unknown';
  return emit.call(this, event, req, res, ...rest);
};
