/**
 * Job types that are not built in: a worker started with a LEASEHOLD_HANDLERS module
 * registers its types, and from then on the HTTP API, the client and the CLI accept them,
 * checking payloads against the schema the module declared; before that, and for a type
 * nobody registered, they refuse the job and write nothing.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { cleanup } from '../test/cleanup';
import { testDatabase } from '../test/db';
import { REDIS_URL } from '../test/env';
import { root, runCli, startWorkers, uniquePrefix } from '../test/processes';
import { waitFor } from '../test/wait';
import { createClient, LeaseholdError, validateJob } from './client';
import { knownJobTypes } from './job-types';

const db = await testDatabase();
const prefix = uniquePrefix('types');
process.env.DATABASE_URL = db.url;
process.env.REDIS_URL = REDIS_URL;
process.env.LEASEHOLD_REDIS_PREFIX = prefix;
cleanup(async () => (await import('@/lib/server/context')).closeServerContext());
const jobs = await import('../app/api/jobs/route');
const consoleInfo = await import('../app/api/console/route');
const client = createClient({ databaseUrl: db.url, redisUrl: REDIS_URL, redisPrefix: prefix });
cleanup(() => client.close());

const post = async (body: unknown) => {
  const res = await jobs.POST(new Request('http://test/api/jobs', { method: 'POST', body: JSON.stringify(body) }));
  return { status: res.status, body: (await res.json()) as { id?: string; error?: { code: string; message: string } } };
};
const count = async () => (await db.pool.query(`SELECT count(*)::int AS n FROM jobs`)).rows[0].n as number;
const statusOf = async (id: string) => (await db.pool.query(`SELECT status, error FROM jobs WHERE job_id = $1`, [id])).rows[0];

const cli = (args: string[], input = '') => runCli(args, { input, env: { DATABASE_URL: db.url, REDIS_URL, LEASEHOLD_REDIS_PREFIX: prefix } });

test('a type is refused until a worker that runs it registers it, then accepted with its payload checked', async () => {
  const before = await post({ type: 'email.send', payload: { to: 'a@example.com' } });
  assert.equal(before.status, 422);
  assert.equal(before.body.error!.code, 'unknown_type');
  assert.match(before.body.error!.message, /unknown job type "email\.send".*once a worker/);
  await assert.rejects(client.enqueue({ type: 'email.send', payload: { to: 'a@example.com' } }), (e: unknown) => e instanceof LeaseholdError && e.code === 'unknown_type');
  const early = await cli(['enqueue', 'report.build', '{}']);
  assert.equal(early.code, 2, early.stderr);
  assert.match(early.stderr, /unknown job type "report\.build"/);
  assert.equal(await count(), 0, 'nothing written for a type nobody runs');

  const workers = startWorkers({
    databaseUrl: db.url,
    redisUrl: REDIS_URL,
    prefix,
    processes: 1,
    concurrency: 4,
    extra: { LEASEHOLD_HANDLERS: path.join(root, 'test/handlers/registered.ts') },
  });
  cleanup(() => workers.stop());
  const registered = await waitFor('the worker to register its types', async () => {
    const { rows } = await db.pool.query(`SELECT name, description, payload_schema, timeout_ms FROM job_types ORDER BY name`);
    return rows.length === 3 ? rows : null;
  }, { timeoutMs: 30_000 });
  assert.deepEqual(registered.map((r) => r.name), ['email.send', 'email.slow', 'report.build'], 'each handler that is not built in, and no built-in one');
  assert.equal(registered[0].description, 'Sends one email.');
  assert.equal(registered[0].payload_schema.properties.to.format, 'email', 'the zod schema, as JSON Schema');
  assert.equal(registered[1].timeout_ms, 300);
  assert.equal(registered[2].payload_schema, null);
  // The console's type filter suggests them.
  const info = await (await consoleInfo.GET(new Request('http://test/api/console'))).json();
  assert.deepEqual(info.jobTypes, ['demo.sleep', 'demo.steps', 'demo.noop', 'email.send', 'email.slow', 'report.build']);

  // The declared schema is the API's check: a bad payload is refused by field, nothing written.
  const bad = await post({ type: 'email.send', payload: { to: 'not an address' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error!.code, 'invalid_request');
  assert.match(bad.body.error!.message, /^payload\.to: .*\(for email\.send\)/);
  const badInArray = await post([{ type: 'report.build' }, { type: 'email.send', payload: {} }]);
  assert.equal(badInArray.status, 400);
  assert.match(badInArray.body.error!.message, /^\[1\]\.payload\.to/);
  const notAnObject = await post({ type: 'report.build', payload: 'x' });
  assert.equal(notAnObject.status, 400, 'a type with no schema still takes an object');
  assert.equal(await count(), 0);

  // Accepted, and run by the worker that registered them.
  const sent = await post({ type: 'email.send', payload: { to: 'a@example.com', subject: 'hi' } });
  assert.equal(sent.status, 202, JSON.stringify(sent.body));
  const built = await post({ type: 'report.build', payload: { month: '2026-11' } });
  assert.equal(built.status, 202);
  const viaClient = await client.enqueue({ type: 'email.send', payload: { to: 'b@example.com' } });
  const viaCli = await cli(['enqueue', 'report.build', '{"month":"2026-10"}', '--json']);
  assert.equal(viaCli.code, 0, viaCli.stderr);
  for (const id of [sent.body.id!, built.body.id!, viaClient.id, JSON.parse(viaCli.stdout).id]) {
    await waitFor(`job ${id} completed`, async () => (await statusOf(id)).status === 'completed', { timeoutMs: 30_000 });
  }
  await assert.rejects(
    client.enqueue({ type: 'email.send', payload: { to: 'nope' } }),
    (e: unknown) => e instanceof LeaseholdError && e.code === 'invalid_request' && /payload\.to/.test(e.message),
  );
  // Standalone, without a database to ask, validateJob knows the built-in types only.
  assert.throws(() => validateJob({ type: 'email.send', payload: { to: 'a@example.com' } }), (e: unknown) => e instanceof LeaseholdError && e.code === 'unknown_type');

  // The CLI: a dry run of a file checks registered types too, and a schedule may name one.
  const dry = await cli(['enqueue', '--file', '-', '--dry-run'], '{"type":"email.send","payload":{"to":"c@example.com"}}\n{"type":"email.send","payload":{"to":"x"}}\n');
  assert.equal(dry.code, 2, dry.stderr);
  assert.match(dry.stderr, /line 2: payload\.to/);
  assert.doesNotMatch(dry.stderr, /line 1/);
  const schedule = await cli(['schedule', 'add', 'nightly-report', '--cron', '0 3 * * *', '--type', 'report.build']);
  assert.equal(schedule.code, 0, schedule.stderr);

  // The module's time limit for its type: the attempt fails as timed out after 300 ms.
  const slow = await post({ type: 'email.slow', maxAttempts: 1 });
  assert.equal(slow.status, 202);
  const ended = await waitFor('the slow job to fail', async () => {
    const r = await statusOf(slow.body.id!);
    return r.status === 'failed' ? r : null;
  }, { timeoutMs: 30_000 });
  assert.match(ended.error, /timed out/);
});

test('built-in types cost no read; a burst of lookups of an unknown type shares one, and a miss is remembered for a second', async () => {
  // The real pool, its queries counted.
  let reads = 0;
  const counted = new Proxy(db.pool, {
    get(target, prop) {
      if (prop === 'query') return (...args: unknown[]) => (reads++, (target.query as (...a: unknown[]) => unknown)(...args));
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  await knownJobTypes(counted, ['demo.noop', 'demo.sleep']);
  assert.equal(reads, 0, 'built-in types are known without the database');
  const answers = await Promise.all(Array.from({ length: 50 }, () => knownJobTypes(counted, ['no.such'])));
  assert.ok(reads <= 2, `50 lookups at once made ${reads} reads`);
  assert.equal(answers[0]!.payloadOf('no.such'), undefined);
  const before = reads;
  for (let k = 0; k < 20; k++) await knownJobTypes(counted, ['no.such']);
  assert.equal(reads, before, 'a name just looked for in vain is refused without another read');
});
