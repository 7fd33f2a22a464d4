/** What `npm start` prints about Redis: the one it uses, or that it claims from PostgreSQL, and why. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redisBanner } from './redis-url';

test('a Redis that answers is named with its keys; none, or one set but not answering, says the workers claim from PostgreSQL', () => {
  assert.equal(redisBanner('redis://127.0.0.1:6379', 'leasehold', true), 'redis://127.0.0.1:6379 (keys leasehold:*)');
  assert.equal(redisBanner(null, 'leasehold', false), 'none: workers claim from PostgreSQL (poll + LISTEN/NOTIFY)');
  // REDIS_URL set to a server that is down: it is kept (the workers return to it when it comes
  // up), but the banner must not read as if it were in use.
  const down = redisBanner('redis://127.0.0.1:6399', 'leasehold', false);
  assert.match(down, /^redis:\/\/127\.0\.0\.1:6399 \(keys leasehold:\*\)/);
  assert.match(down, /not answering: workers claim from PostgreSQL \(poll \+ LISTEN\/NOTIFY\) until it does/);
});
