/** npm start's children kept alive: a start that fails is tried again, not an uncaught error. */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { recordingLog } from '../test/recording-log';
import { waitFor } from '../test/wait';
import { keepAlive } from './keep-alive';


test('a child whose spawn fails with an error event (ENOENT) is tried again; stop ends the keeping', async () => {
  const { log, lines, delays } = recordingLog();
  const starts: ChildProcess[] = [];
  const kept = keepAlive('missing', () => starts[starts.push(spawn('/nonexistent/leasehold-child')) - 1]!, { log });
  // The second failure, quick after the first, schedules its restart after a back-off.
  await waitFor('the second start to fail', () => delays.length >= 2, { timeoutMs: 30_000 });
  assert.equal(starts[0]!.pid, undefined, 'the first start failed');
  assert.match(lines[0]!, /^missing could not be started; restarting$/);
  assert.ok(delays[1]! > 0, 'a back-off');
  await kept.stop();
  const after = starts.length;
  // Past the pending restart's time (a negative, so a bounded wait): the stop cancelled it.
  await sleep(delays[1]! + 500);
  assert.equal(starts.length, after, 'no start after the stop');
});

test('a child whose spawn throws (ENOMEM, E2BIG) is tried again, the first start included', async () => {
  const { log, lines } = recordingLog();
  let calls = 0;
  const kept = keepAlive(
    'throwing',
    () => {
      calls++;
      // A real spawn that throws: an argument past the kernel's limit for one string.
      return spawn(process.execPath, ['-e', '', 'x'.repeat(256 * 1024)]);
    },
    { log },
  );
  await waitFor('a second start after the thrown one', () => calls >= 2, { timeoutMs: 30_000 });
  assert.match(lines[0]!, /^throwing could not be started; restarting$/);
  await kept.stop();
});

test('a child that exits is started again; stop ends the one running and starts no other', async () => {
  const { log, lines } = recordingLog();
  const starts: ChildProcess[] = [];
  const kept = keepAlive(
    'short-lived',
    // The first exits at once; the next ones run until stopped.
    () => starts[starts.push(spawn(process.execPath, ['-e', starts.length === 0 ? 'process.exit(3)' : 'setInterval(() => {}, 1000)'])) - 1]!,
    { log },
  );
  await waitFor('a second start after the exit', () => starts.length === 2 && starts[1]!.pid !== undefined);
  assert.deepEqual(lines, ['short-lived exited; restarting']);
  await kept.stop();
  assert.equal(starts[1]!.signalCode, 'SIGTERM');
  assert.equal(starts.length, 2);
});

test('a child that exits with the final code (a handlers module no restart mends) is not started again; onFinal is told', async () => {
  const { log, lines } = recordingLog();
  let starts = 0;
  let finals = 0;
  keepAlive(
    'refusing',
    () => {
      starts++;
      return spawn(process.execPath, ['-e', 'process.exit(78)']);
    },
    { log, finalCode: 78, onFinal: () => finals++ },
  );
  await waitFor('onFinal to be told', () => finals === 1, { timeoutMs: 30_000 });
  assert.equal(starts, 1);
  assert.match(lines[0]!, /^refusing exited with code 78, which a restart would not mend: not restarting it$/);
});
