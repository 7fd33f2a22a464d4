/** Unit tests: password hashing, the CSRF rules, the sign-in limiter, role checks. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cookieValue, csrfProblem } from './gate';
import { hashPassword, verifyPassword } from './passwords';
import { clientAddress, MAX_KEYS, UNGUARDED_ADDRESS, MAX_PER_ACCOUNT, MAX_PER_ADDRESS, PEER_HEADER, SETUP_LINK, signInBlockedFor, signInFailed, signInSucceeded, SignInLimiter, WINDOW_MS } from './rate-limit';
import { allows, type Principal } from './roles';

test('scrypt hashes: salted, verified in constant time, wrong passwords refused', async () => {
  const a = await hashPassword('correct horse battery');
  const b = await hashPassword('correct horse battery');
  assert.notEqual(a, b, 'a fresh salt per hash');
  assert.match(a, /^scrypt\$32768\$8\$1\$/);
  assert.equal(await verifyPassword('correct horse battery', a), true);
  assert.equal(await verifyPassword('correct horse batterz', a), false);
  assert.equal(await verifyPassword('x', 'not-a-hash'), false);
});

const req = (method: string, headers: Record<string, string>) => new Request('http://console.test/api/x', { method, headers: { host: 'console.test', ...headers } });

test('CSRF: same-origin JSON passes; foreign, missing or null origins, cross-site fetch metadata and simple requests fail', () => {
  const json = { 'content-type': 'application/json' };
  assert.equal(csrfProblem(req('POST', { origin: 'http://console.test', ...json }), 'cookie'), null);
  assert.equal(csrfProblem(req('POST', { referer: 'http://console.test/jobs', 'x-leasehold-request': '1' }), 'cookie'), null);
  assert.equal(csrfProblem(req('GET', { origin: 'https://evil.example' }), 'cookie'), null, 'reads are not checked');
  assert.equal(csrfProblem(req('POST', { origin: 'https://evil.example' }), 'bearer'), null, 'tokens are not ambient');
  for (const h of [
    { origin: 'https://evil.example', ...json },
    { origin: 'http://console.test.evil.example', ...json },
    { origin: 'null', ...json },
    { ...json },
    { origin: 'http://console.test', 'sec-fetch-site': 'cross-site', ...json },
    { origin: 'http://console.test', 'content-type': 'text/plain' },
    { origin: 'http://console.test', 'content-type': 'application/x-www-form-urlencoded' },
    { referer: 'not a url', ...json },
  ]) {
    assert.ok(csrfProblem(req('POST', h), 'cookie'), JSON.stringify(h));
  }
  // With sign-in off: no credentials to ride on, but a foreign page may still not act.
  assert.equal(csrfProblem(req('POST', {}), 'off'), null);
  assert.ok(csrfProblem(req('POST', { origin: 'https://evil.example' }), 'off'));
});

test('sign-in limiter: per account and per address, cleared by a success, forgotten after the window', () => {
  const t0 = 1_000_000;
  for (let k = 0; k < MAX_PER_ACCOUNT - 1; k++) signInFailed('Ann', '10.0.0.1', t0);
  assert.equal(signInBlockedFor('ann', '10.0.0.2', t0), 0);
  signInFailed('ann', '10.0.0.1', t0);
  assert.ok(signInBlockedFor('ANN', '10.0.0.2', t0) > 0, 'the account, from any address, names case-insensitive');
  assert.equal(signInBlockedFor('ann', '10.0.0.2', t0 + WINDOW_MS + 1), 0, 'the window passes');
  signInSucceeded('ann');
  for (let k = 0; k < MAX_PER_ADDRESS; k++) signInFailed(`spray-${k}`, '10.9.9.9', t0);
  assert.ok(signInBlockedFor('someone-else', '10.9.9.9', t0) > 0, 'the address, for any account');
});

test('sign-in limiter: the setup link counts per address only, apart from every user name', () => {
  const t0 = 3_000_000;
  for (let k = 0; k < MAX_PER_ACCOUNT; k++) signInFailed('setup', `10.3.0.${k}`, t0);
  assert.equal(signInBlockedFor(SETUP_LINK, '10.3.1.1', t0), 0, 'failed sign-ins as "setup" leave the setup link open');
  for (let k = 0; k < 10 * MAX_PER_ACCOUNT; k++) signInFailed(SETUP_LINK, `10.3.2.${k}`, t0);
  assert.equal(signInBlockedFor(SETUP_LINK, '10.3.1.1', t0), 0, 'wrong links from many addresses do not keep the real one out');
  for (let k = 0; k < MAX_PER_ADDRESS; k++) signInFailed(SETUP_LINK, '10.3.3.3', t0);
  assert.ok(signInBlockedFor(SETUP_LINK, '10.3.3.3', t0) > 0, 'the address that sent them is limited');
  assert.equal(signInBlockedFor('admin', '10.3.1.1', t0), 0, 'and no user');
});

test('sign-in limiter: a spray of names past the key bound forgets the oldest keys, but not the spraying address nor a blocked account', () => {
  const t0 = 5_000_000;
  for (let k = 0; k < MAX_PER_ACCOUNT; k++) signInFailed('old-account', `10.1.1.${k}`, t0);
  signInFailed('old-miss', '10.1.2.1', t0);
  assert.ok(signInBlockedFor('old-account', '10.1.1.200', t0) > 0, 'blocked before the spray');
  for (let k = 0; k < MAX_KEYS + 10; k++) signInFailed(`spray-${k}`, `10.7.${k >> 8}.${k & 255}`, t0 + 1);
  assert.ok(signInBlockedFor('old-account', '10.1.1.200', t0 + 1) > 0, 'a blocked account stays blocked: its guesses are not given back');
  signInFailed('old-miss', '10.1.2.1', t0 + 2);
  assert.equal(signInBlockedFor('old-miss', '10.1.2.2', t0 + 2), 0);
  for (let k = 0; k < MAX_PER_ACCOUNT - 2; k++) signInFailed('old-miss', '10.1.2.1', t0 + 2);
  assert.equal(signInBlockedFor('old-miss', '10.1.2.2', t0 + 2), 0, "an unblocked key's old failure was forgotten first (9 counted, not 10)");
});

test('sign-in limiter: a spray from one address is stopped by the address', () => {
  const t0 = 7_000_000;
  for (let k = 0; k < MAX_PER_ADDRESS; k++) signInFailed(`spray-${k}`, '10.8.8.8', t0);
  assert.ok(signInBlockedFor('anyone', '10.8.8.8', t0) > 0, 'the sprayer is counted');
});

test('the address of an attempt: the TCP peer; X-Forwarded-For only behind a declared proxy, and then its last hop', () => {
  const r = (headers: Record<string, string>) => new Request('http://console.test/api/auth/signin', { method: 'POST', headers });
  const spoofed = { [PEER_HEADER]: '192.0.2.10', 'x-forwarded-for': '1.2.3.4', 'x-real-ip': '5.6.7.8' };
  assert.equal(clientAddress(r(spoofed), false, true), '192.0.2.10', 'client-sent forwarding headers are ignored');
  assert.equal(clientAddress(r({ [PEER_HEADER]: '10.0.0.2', 'x-forwarded-for': '6.6.6.6, 198.51.100.4' }), true, true), '198.51.100.4', 'the hop the proxy appended');
  assert.equal(clientAddress(r({ [PEER_HEADER]: '10.0.0.2' }), true, true), '10.0.0.2', 'no forwarded header: the peer');
  assert.equal(clientAddress(r({}), false, true), 'local');
});

test("without the http guard the peer header is the client's own: it is not trusted, all attempts share one address", () => {
  const r = (headers: Record<string, string>) => new Request('http://console.test/api/auth/signin', { method: 'POST', headers });
  assert.equal(clientAddress(r({ [PEER_HEADER]: '203.0.113.7' }), false, false), UNGUARDED_ADDRESS);
  assert.equal(clientAddress(r({ [PEER_HEADER]: '203.0.113.8' }), false, false), UNGUARDED_ADDRESS, 'a new header each try does not escape the count');
  assert.equal(clientAddress(r({ 'x-forwarded-for': '198.51.100.4' }), true, false), '198.51.100.4', 'a declared proxy still names the client');
  assert.equal(clientAddress(r({}), false), UNGUARDED_ADDRESS, 'this test process has no guard preloaded');
});

test('roles: viewer < operator < admin; enqueue is its own scope', () => {
  const p = (role: Principal['role'], enqueue = false): Principal => ({ kind: 'token', name: 't', role, enqueue, via: 'bearer' });
  assert.equal(allows(p('viewer'), 'viewer'), true);
  assert.equal(allows(p('viewer'), 'operator'), false);
  assert.equal(allows(p('operator'), 'enqueue'), true);
  assert.equal(allows(p('admin'), 'operator'), true);
  assert.equal(allows(p(null, true), 'enqueue'), true);
  assert.equal(allows(p(null, true), 'viewer'), false);
  assert.equal(allows(p(null), 'public'), true);
});

test('a session cookie that is not valid percent-encoding reads as no cookie (a 401, never a 500)', () => {
  const r = new Request('http://console.test/', { headers: { cookie: 'a=1; leasehold_session=%E0%A4%A; b=2' } });
  assert.equal(cookieValue(r, 'leasehold_session'), null);
  assert.equal(cookieValue(r, 'b'), '2');
  const ok = new Request('http://console.test/', { headers: { cookie: 'leasehold_session=abc%2Bdef' } });
  assert.equal(cookieValue(ok, 'leasehold_session'), 'abc+def');
});

test('sign-in limiter: a map filled with blocked keys still counts the attempt in hand (the oldest blocked key goes instead)', () => {
  const t0 = 9_000_000;
  // Addresses that each block five accounts and themselves: six blocked keys per 50 failures.
  for (let a = 0; a * 6 < MAX_KEYS + 12; a++) {
    for (let k = 0; k < MAX_PER_ADDRESS; k++) signInFailed(`filler-${a}-${k % 5}`, `10.66.${a >> 8}.${a & 255}`, t0);
  }
  for (let k = 0; k < MAX_PER_ACCOUNT; k++) signInFailed('admin-target', '10.99.0.1', t0 + 1);
  assert.ok(signInBlockedFor('admin-target', '10.99.0.2', t0 + 1) > 0, 'the account under attack is counted, and blocked');
});

test('sign-in limiter at its bound: a block that has ended is forgotten before one that goes on, though it began later', () => {
  const L = new SignInLimiter(3);
  const min = 60_000;
  const t0 = 1_000_000;
  L.failed('early', 'x', t0);
  for (let k = 0; k < MAX_PER_ACCOUNT; k++) L.failed('late', 'x', t0 + 10 * min); // blocked until t0 + 25 min
  for (let k = 0; k < MAX_PER_ACCOUNT - 1; k++) L.failed('early', 'x', t0 + 11 * min); // blocked after it, until t0 + 15 min
  assert.ok(L.blockedFor('early', 'y', t0 + 11 * min) > 0 && L.blockedFor('late', 'y', t0 + 11 * min) > 0);
  // Past 15 min, a fourth key needs room: the ended block goes, not the one still on.
  L.failed('new', 'x', t0 + 16 * min);
  assert.ok(L.blockedFor('late', 'y', t0 + 16 * min) > 0, 'a blocked account is not forgotten while another key can go');
  for (let k = 0; k < MAX_PER_ACCOUNT - 1; k++) L.failed('early', 'x', t0 + 16 * min);
  assert.equal(L.blockedFor('early', 'y', t0 + 16 * min), 0, 'the ended one was forgotten (9 failures, not 18)');
});

test('sign-in limiter at its bound with every other key blocked: the block that ends first goes, and the attempt in hand counts', () => {
  const L = new SignInLimiter(3);
  const min = 60_000;
  const t0 = 1_000_000;
  for (let k = 0; k < MAX_PER_ACCOUNT; k++) L.failed('a1', 'p', t0); // until t0 + 15 min
  for (let k = 0; k < MAX_PER_ACCOUNT; k++) L.failed('a2', 'p', t0 + 5 * min); // until t0 + 20 min
  L.failed('z', 'q', t0 + 6 * min);
  assert.equal(L.blockedFor('a1', 'r', t0 + 6 * min), 0, 'the block ending first was forgotten');
  assert.ok(L.blockedFor('a2', 'r', t0 + 6 * min) > 0, 'the other is kept');
  for (let k = 0; k < MAX_PER_ACCOUNT - 1; k++) L.failed('z', 'q', t0 + 6 * min);
  assert.ok(L.blockedFor('z', 'r', t0 + 6 * min) > 0, 'the attempt that made room was counted: ten, so blocked');
  assert.ok(L.blockedFor('a2', 'r', t0 + 6 * min) > 0);
});

test('sign-in limiter: an attempt taken back (no guess) from a blocked account unblocks it, and it counts on from there', () => {
  const L = new SignInLimiter();
  const t0 = 1_000_000;
  for (let k = 0; k < MAX_PER_ACCOUNT - 1; k++) L.failed('w', `10.5.0.${k}`, t0);
  const last = L.attempt('w', '10.5.1.1', t0 + 1);
  assert.ok(L.blockedFor('w', '10.5.1.2', t0 + 1) > 0, 'counted as it started: blocked');
  last.noGuess();
  assert.equal(L.blockedFor('w', '10.5.1.2', t0 + 1), 0, 'taken back');
  L.failed('w', '10.5.1.3', t0 + 2);
  assert.equal(L.blockedFor('w', '10.5.1.2', t0 + 2), Math.ceil(WINDOW_MS / 1000), 'blocked again, until the oldest of its ten leaves the window');
});
