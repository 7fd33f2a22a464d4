/**
 * The guard preloaded in front of Next (worker/http-guard.mjs), on a real HTTP server in this
 * process: the peer-address header is the TCP peer's whatever the client sent under that
 * name, and a path that is not valid percent-encoding gets the API's 400.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { clientAddress, PEER_HEADER } from '../lib/auth/rate-limit';
import './http-guard.mjs';

const server = http.createServer((req, res) => res.end(JSON.stringify({ peer: req.headers[PEER_HEADER] ?? null })));
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
after(() => server.close());
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

test('the peer header is set from the connection, overwriting a client-sent one', async () => {
  const res = await fetch(`${base}/api/auth/signin`, { headers: { [PEER_HEADER]: '203.0.113.99' } });
  assert.deepEqual(await res.json(), { peer: '127.0.0.1' });
});

test('the guard marks the process, so lib/auth/rate-limit.ts trusts the header it sets', () => {
  const r = new Request('http://console.test/api/auth/signin', { headers: { [PEER_HEADER]: '192.0.2.1' } });
  assert.equal(clientAddress(r, false), '192.0.2.1');
});

test('a path that is not valid percent-encoding gets a 400 in the API error shape', async () => {
  const res = await fetch(`${base}/api/jobs/%E0%A4%A`);
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.code, 'invalid_request');
});

test("an API query string that is not valid percent-encoding gets a 400 too; a page's query and well-formed ones pass", async () => {
  for (const q of ['queue=%E9', 'q=%', '%E9=1', 'a=1&worker=%ED%A0%80']) {
    const res = await fetch(`${base}/api/jobs?${q}`);
    assert.equal(res.status, 400, q);
    assert.deepEqual(await res.json(), { error: { code: 'invalid_request', message: 'the query string is not valid percent-encoded UTF-8' } });
  }
  assert.equal((await fetch(`${base}/api/jobs?queue=caf%C3%A9+bar`)).status, 200);
  // A console page reads its own query (React escapes whatever it shows); the API's rule is the API's.
  assert.equal((await fetch(`${base}/jobs?queue=%E9`)).status, 200);
});

test("a URL past Node's header limit gets a 431 in the API error shape, not a bare one", async () => {
  const res = await fetch(`${base}/api/jobs?queue=${'q'.repeat(http.maxHeaderSize + 1)}`);
  assert.equal(res.status, 431);
  assert.equal(res.headers.get('content-type'), 'application/json');
  assert.deepEqual(await res.json(), {
    error: { code: 'payload_too_large', message: `the request's headers, its URL among them, are over ${http.maxHeaderSize} bytes` },
  });
  assert.equal((await fetch(`${base}/api/jobs`)).status, 200, 'the server serves on');
});

test('TRACE (which Next answers with a 500 as text) and other methods Next has no handler for get a 405 naming the methods served; a method Node cannot parse a 400; both in the API error shape', async () => {
  const raw = (request: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1', () => socket.write(request));
      let text = '';
      socket.on('data', (d) => (text += d));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
  for (const method of ['TRACE', 'PROPFIND']) {
    const res = await raw(`${method} /api/jobs HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
    assert.match(res, /^HTTP\/1\.1 405 /, method);
    assert.match(res, /\r\nallow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n/i, method);
    assert.ok(res.includes(`{"error":{"code":"method_not_allowed","message":"${method} is not served by this console"}}`), res);
  }
  for (const method of ['get', 'FROB']) {
    const res = await raw(`${method} /api/jobs HTTP/1.1\r\nhost: x\r\n\r\n`);
    assert.match(res, /^HTTP\/1\.1 400 /, method);
    assert.match(res, /content-type: application\/json/, method);
    assert.match(res, /\{"error":\{"code":"invalid_request","message":"not an HTTP method this server knows"\}\}$/, method);
  }
  assert.equal((await fetch(`${base}/api/jobs`)).status, 200, 'the server serves on');
});
