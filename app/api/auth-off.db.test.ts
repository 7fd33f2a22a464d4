/**
 * With sign-in off (LEASEHOLD_AUTH=off, local demos), the console answers to its own names
 * only: a page on another site that DNS rebinding points at 127.0.0.1 sends a Host and an
 * Origin of its own name, which match each other, and would otherwise read every job and act.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanup } from '../../test/cleanup';
import { testDatabase } from '../../test/db';
import { REDIS_URL } from '../../test/env';
import { insertJob, jobRow } from '../../test/factories';
import { uniquePrefix } from '../../test/processes';
import { loadRoutes } from '../../test/api-routes';
import { send } from '../../test/auth/harness';

const db = await testDatabase();
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = uniquePrefix('authoff');
process.env.LEASEHOLD_AUTH = 'off';
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());
const routes = await loadRoutes();

test('a request addressed to a name that is not this console\'s is refused, read or action, and changes nothing', async () => {
  const id = await insertJob(db.pool, { status: 'queued' });
  const rebound = { headers: { host: 'attacker.example:3562', 'sec-fetch-site': 'same-origin' }, origin: 'http://attacker.example:3562' };
  const read = await send(routes, 'GET', '/api/jobs', { ...rebound, query: 'limit=1' });
  assert.equal(read.status, 403);
  assert.match((await read.json()).error.message, /DNS rebinding/);
  const act = await send(routes, 'POST', '/api/actions/{action}', { ...rebound, params: { action: 'cancel' }, body: { ids: [id] } });
  assert.equal(act.status, 403);
  assert.equal((await jobRow(db.pool, id)).status, 'queued');

  // Behind a declared proxy, a client's own X-Forwarded-Host in front of the proxy's does not get round it.
  process.env.LEASEHOLD_TRUST_PROXY = '1';
  try {
    const spoofed = await send(routes, 'GET', '/api/jobs', { headers: { host: '127.0.0.1:3000', 'x-forwarded-host': 'localhost, attacker.example' }, query: 'limit=1' });
    assert.equal(spoofed.status, 403);
  } finally {
    delete process.env.LEASEHOLD_TRUST_PROXY;
  }

  // Its own names still work: an address, localhost, and a name listed in LEASEHOLD_ALLOWED_HOSTS.
  for (const host of ['127.0.0.1:3000', '[::1]:3000', 'localhost:3000', 'console.test']) {
    const r = await send(routes, 'GET', '/api/jobs', { headers: { host }, query: 'limit=1' });
    assert.equal(r.status, 200, host);
  }
  const done = await send(routes, 'POST', '/api/actions/{action}', { headers: { host: '127.0.0.1:3000' }, origin: 'http://127.0.0.1:3000', params: { action: 'cancel' }, body: { ids: [id] } });
  assert.equal(done.status, 200);
  assert.equal((await jobRow(db.pool, id)).status, 'cancelled');
});
