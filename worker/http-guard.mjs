/**
 * Preloaded into the console's `next start` process (node --import), in front of Next:
 *  - a request whose path is not valid percent-encoded UTF-8 (`/api/jobs/%E0%A4%A`) gets a
 *    400 with the API's error shape, where Next's router otherwise fails on it with a bare
 *    500 before proxy.ts or any route handler runs (vercel/next.js#92527, open at Next 16.4);
 *    so does an API request whose query string is not (`/api/jobs?queue=%E9`): Next decodes
 *    and re-encodes the query before a handler sees it, a bad escape turned into U+FFFD, and
 *    a filter would quietly search for what nobody typed (readQuery's own check, in
 *    lib/http/respond.ts, only serves handlers called without Next, as the tests call them);
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

/**
 * Node refuses a request whose headers (the URL among them) pass its limit before any
 * handler runs, with a bare 431 and no body: answered here in the API's error shape.
 */
function headersTooLarge(socket) {
  const body = JSON.stringify({
    error: { code: 'payload_too_large', message: `the request's headers, its URL among them, are over ${http.maxHeaderSize} bytes` },
  });
  // Closed once written, as Node closes it after its own 431 (the server allows half-open sockets).
  socket.end(
    'HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-type: application/json\r\n' +
      "cache-control: no-store\r\nx-content-type-options: nosniff\r\ncontent-security-policy: default-src 'none'; frame-ancestors 'none'\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, res, ...rest) {
  // clientError's arguments are (error, socket); a socket with a response under way is left to
  // Node (the condition Node's own answer checks).
  if (event === 'clientError' && req?.code === 'HPE_HEADER_OVERFLOW' && res?.writable && !res._httpMessage?._headerSent) {
    headersTooLarge(res);
    return true;
  }
  const problem = event === 'request' && typeof req?.url === 'string' ? undecodable(req.url) : null;
  if (problem) {
    res.writeHead(400, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      // DATA_CSP of lib/http/security-headers.ts (this file is loaded before TypeScript is).
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    });
    res.end(JSON.stringify({ error: { code: 'invalid_request', message: problem } }));
    return true;
  }
  if (event === 'request' && req?.headers) req.headers[PEER_HEADER] = req.socket?.remoteAddress ?? 'unknown';
  return emit.call(this, event, req, res, ...rest);
};
