/**
 * Readiness as the built console answers it (route bundles each hold their own copy of the
 * modules, which a test of the route handler in one Node process cannot show): a second
 * console on the same database, with a Redis that refuses connections, says Redis is
 * unreachable, not "not configured".
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../../lib/ports';
import { expect, test } from './test';
import { e2eDatabaseUrl, e2eEnv } from './env';

test('readiness tells an unreachable Redis from none configured, and from one in use', async ({ request }) => {
  test.setTimeout(120_000);
  const ours = await (await request.get('/api/health?ready')).json();
  expect(ours).toMatchObject({ ok: true, postgres: 'ok', redis: 'in use', signal: 'redis' });

  const port = await freePort();
  const refused = await freePort(); // nothing listens there
  const web: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'worker/bin/web.ts'], {
    env: { ...process.env, ...e2eEnv(), PORT: String(port), DATABASE_URL: e2eDatabaseUrl(), REDIS_URL: `redis://127.0.0.1:${refused}` },
    stdio: 'ignore',
  });
  try {
    const url = `http://127.0.0.1:${port}/api/health?ready`;
    await expect
      .poll(async () => (await request.get(url).catch(() => null))?.status() ?? 0, { timeout: 90_000, message: 'the second console to answer' })
      .toBe(200);
    expect(await (await request.get(url)).json()).toMatchObject({ ok: true, postgres: 'ok', redis: 'unreachable', signal: 'postgres-notify' });
  } finally {
    const exited = new Promise((r) => web.once('exit', r));
    if (web.exitCode === null && web.signalCode === null) web.kill('SIGTERM');
    await exited;
  }
});
