/** The supervisor keeps its slots filled when a fork itself fails, and backs off a crash loop. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordingLog } from '../test/recording-log';
import { waitFor } from '../test/wait';
import { Supervisor } from './supervisor';


test('a fork that throws (E2BIG, ENOMEM) is tried again with a growing back-off, not an error ending the supervisor', async () => {
  const { log, lines, delays } = recordingLog();
  // A real fork that throws synchronously: one environment string past the kernel's limit.
  const supervisor = new Supervisor({ processes: 1, args: [], env: { ...process.env, LEASEHOLD_TOO_BIG: 'x'.repeat(256 * 1024) }, log, maxBackoffMs: 1_000 });
  supervisor.start(); // the first fork throws here, inside start(): it must not
  await waitFor('three failed starts', () => delays.length >= 3, { timeoutMs: 30_000 });
  assert.match(lines[0]!, /^could not start a worker process$/);
  assert.deepEqual(supervisor.pids, [], 'no process runs');
  assert.equal(delays[0], 0, 'the first is tried again at once');
  assert.ok(delays[1]! > 0 && delays[2]! > delays[1]!, `then later and later: ${delays.join(', ')} ms`);
  await supervisor.stop(1_000);
});

test('a process that dies before it is ready counts as a quick death however long it took (a database that drops packets)', async () => {
  const { log, delays } = recordingLog();
  // Nothing listens on port 1: each process fails its first connect and exits before it is
  // ready. With minUptimeMs 0 only "not ready yet" can make those deaths quick.
  const env = { ...process.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1', LEASEHOLD_LOG: 'error' };
  const supervisor = new Supervisor({ processes: 1, args: ['--concurrency', '1'], env, log, minUptimeMs: 0, maxBackoffMs: 2_000 });
  supervisor.start();
  try {
    await waitFor('three deaths', () => delays.length >= 3, { timeoutMs: 60_000 });
    assert.equal(delays[0], 0, 'the first is replaced at once');
    assert.ok(delays[1]! > 0 && delays[2]! > delays[1]!, `then later and later: ${delays.join(', ')} ms`);
  } finally {
    await supervisor.stop(5_000);
  }
});
