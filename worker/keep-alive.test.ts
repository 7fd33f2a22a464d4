/** npm start's children kept alive: a start that fails is tried again, not an uncaught error. */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { test } from 'node:test';
import { createLogger } from '../lib/log';
import { waitFor } from '../test/wait';
import { keepAlive } from './keep-alive';

const quiet = createLogger({ test: 'keep-alive' });

test('a child that cannot be started (its spawn fails) is tried again, and the keeper stops at once', async () => {
  const starts: ChildProcess[] = [];
  let stopping = false;
  // A real spawn that fails: ENOENT comes as an 'error' event, never an 'exit'.
  const kept = keepAlive('missing', () => starts[starts.push(spawn('/nonexistent/leasehold-child')) - 1]!, { log: quiet, stopping: () => stopping });
  await waitFor('a second start after the failed one', () => starts.length >= 2, { timeoutMs: 30_000 });
  assert.equal(starts[0]!.pid, undefined, 'the first start failed');
  stopping = true;
  await kept.stop();
});

test('a child that exits is started again; stop ends the one running', async () => {
  const starts: ChildProcess[] = [];
  let stopping = false;
  const kept = keepAlive(
    'short-lived',
    // The first exits at once; the next ones run until stopped.
    () => starts[starts.push(spawn(process.execPath, ['-e', starts.length === 0 ? 'process.exit(3)' : 'setInterval(() => {}, 1000)'])) - 1]!,
    { log: quiet, stopping: () => stopping },
  );
  await waitFor('a second start after the exit', () => starts.length === 2 && starts[1]!.pid !== undefined);
  stopping = true;
  await kept.stop();
  assert.equal(starts[1]!.signalCode, 'SIGTERM');
  assert.equal(starts.length, 2);
});
