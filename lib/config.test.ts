/** A bad setting is refused at start, naming the variable and what it takes. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig as load } from './config';

const loadConfig = (env: Record<string, string>) => load(env as unknown as NodeJS.ProcessEnv);

const refused = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (e) {
    return (e as Error).message;
  }
  assert.fail(`accepted ${JSON.stringify(env)}`);
};

test('DATABASE_URL must be a postgres URL: "not-a-url" is said to be one, not later a host not found', () => {
  assert.match(refused({ DATABASE_URL: 'not-a-url' }), /DATABASE_URL: must be a postgres:\/\/ \(or postgresql:\/\/\) URL/);
  assert.match(refused({ DATABASE_URL: 'mysql://x@127.0.0.1/db' }), /DATABASE_URL: must be a postgres/);
  for (const ok of [
    'postgres://postgres@127.0.0.1:5432/x',
    'postgresql://u:p@db.internal/leasehold?sslmode=require',
    'postgres://user:secret@/leasehold?host=/var/run/postgresql',
    'postgres://u:p%40ss@[::1]:5432/x',
    'socket:/var/run/postgresql?db=leasehold',
  ]) {
    assert.equal(loadConfig({ DATABASE_URL: ok }).databaseUrl, ok);
  }
});

test('REDIS_URL must be a redis URL (or off): a typo is said at start, not later as a stack from the Redis client', () => {
  assert.match(refused({ REDIS_URL: 'not a url' }), /REDIS_URL: must be a redis:\/\/ \(or rediss:\/\/\) URL/);
  assert.match(refused({ REDIS_URL: 'redis://127.0.0.1:99999' }), /REDIS_URL: must be a redis/);
  assert.match(refused({ REDIS_URL: 'http://127.0.0.1:6379' }), /REDIS_URL: must be a redis/);
  // Spaces around it: the Redis client would refuse it later, with a stack.
  assert.match(refused({ REDIS_URL: ' redis://127.0.0.1:6379 ' }), /REDIS_URL: must be a redis/);
  for (const ok of ['redis://127.0.0.1:6379', 'rediss://user:pw@cache.internal:6380/2', 'redis://[::1]:6379', 'off', '', 'none']) {
    assert.equal(loadConfig({ REDIS_URL: ok }).redisUrl, ok);
  }
});

test('LEASEHOLD_LOG takes a level; empty is unset', () => {
  assert.match(refused({ LEASEHOLD_LOG: 'verbose' }), /LEASEHOLD_LOG: must be debug, info, warn or error/);
  loadConfig({ LEASEHOLD_LOG: '' });
  loadConfig({ LEASEHOLD_LOG: 'debug' });
});

test('a renewal interval too long for the lease names the figures configured', () => {
  assert.match(refused({ LEASEHOLD_LEASE_MS: '3000', LEASEHOLD_HEARTBEAT_MS: '2900' }), /LEASEHOLD_HEARTBEAT_MS \(2900 ms\) must be shorter .*\(2700 ms of 3000\)/);
});

test('LEASEHOLD_LOG_URL: an http(s) URL template of known placeholders; empty is unset', () => {
  assert.equal(loadConfig({}).logUrl, null);
  assert.equal(loadConfig({ LEASEHOLD_LOG_URL: ' ' }).logUrl, null);
  const ok = 'https://logs.example.com/search?q=job%3A{id}&from={startedMs}&to={finishedMs}';
  assert.equal(loadConfig({ LEASEHOLD_LOG_URL: ok }).logUrl, ok);
  assert.match(refused({ LEASEHOLD_LOG_URL: 'https://logs.example.com/?q={job}' }), /LEASEHOLD_LOG_URL: unknown placeholder \{job\}; known: \{id\} \{attempt\}/);
  assert.match(refused({ LEASEHOLD_LOG_URL: 'javascript:alert({id})' }), /LEASEHOLD_LOG_URL: must be an http:\/\/ or https:\/\/ URL/);
  assert.match(refused({ LEASEHOLD_LOG_URL: 'logs/{id}' }), /LEASEHOLD_LOG_URL: must be an absolute URL/);
});
