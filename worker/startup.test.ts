/**
 * What a worker process and the command line load when they start: drizzle's table builders
 * and migrator (about 200 modules) cost a process 0.2 s of start and 10 MB, and only
 * migrations (loaded when they run) and the console need them; nor does a worker need the
 * HTTP API's schemas.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { root } from '../test/processes';

/** The modules a process loaded, run through test/loaded-modules.mjs until it exits. */
function loadedBy(entry: string, args: string[], env: Record<string, string>): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'test/loaded-modules.mjs'), entry, ...args], {
      cwd: root,
      env: { ...process.env, LEASEHOLD_LOG: 'error', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', () => {
      const line = stderr.split('\n').find((l) => l.startsWith('LOADED '));
      if (!line) return reject(new Error(`no module list; stderr: ${stderr.slice(-2000)}`));
      resolve(JSON.parse(line.slice('LOADED '.length)));
    });
  });
}

const fromPackage = (urls: string[], pkg: string) => urls.filter((u) => u.includes(`/node_modules/${pkg}/`));

test("a worker process starts without drizzle or the HTTP API's schemas", async () => {
  // A database nothing listens on: the process loads everything it imports, then fails to register.
  const urls = await loadedBy('worker/process.ts', [], { DATABASE_URL: 'postgres://leasehold@127.0.0.1:1/none', REDIS_URL: 'off' });
  // Listed: the worker's own modules, and the ones that pulled drizzle in before (a list cut
  // short would pass without them).
  for (const m of ['/worker/runner.ts', '/lib/queue/status.ts', '/lib/db/enums.ts']) assert.ok(urls.some((u) => u.endsWith(m)), `${m} among the ${urls.length} URLs`);
  assert.deepEqual(fromPackage(urls, 'drizzle-orm'), []);
  // Nor the API's request schemas: nothing a worker does reads a request.
  assert.deepEqual(urls.filter((u) => u.endsWith('/lib/http/schemas.ts')), []);
});

test('the command line starts without drizzle, for any verb but migrate', async () => {
  const urls = await loadedBy('worker/bin/cli.ts', ['--help'], {});
  for (const m of ['/worker/cli/actions.ts', '/lib/http/schemas.ts', '/lib/db/enums.ts']) assert.ok(urls.some((u) => u.endsWith(m)), `${m} among the ${urls.length} URLs`);
  assert.deepEqual(fromPackage(urls, 'drizzle-orm'), []);
});
