/** `npm start` hands its worker options to the supervisor it forks: every one of them, unchanged. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { Command } from 'commander';
import { addWorkerOptions, type WorkerCommandOptions, workerCommandArgs } from './worker';

const parse = (argv: string[]) => addWorkerOptions(new Command('worker').exitOverride()).parse(argv, { from: 'user' }).opts<WorkerCommandOptions>();

test('the options survive the trip through the supervisor\'s arguments, --prefetch included', () => {
  for (const argv of [[], ['--processes', '3', '--concurrency', '7', '--queues', 'mail,default', '--prefetch', '40'], ['-p', '1', '-q', 'a']]) {
    const opts = parse(argv);
    assert.deepEqual(parse(workerCommandArgs(opts)), opts, argv.join(' '));
  }
  // Every option the command takes is one it passes on (set to other than its default, so a
  // dropped one cannot hide behind the default the far side would give it).
  const taken = addWorkerOptions(new Command('worker')).options.map((o) => o.long!);
  const passed = workerCommandArgs(parse(['-p', '3', '-c', '7', '-q', 'mail', '--prefetch', '40'])).filter((a) => a.startsWith('--'));
  assert.deepEqual(passed.sort(), taken.sort());
});

test('npm run worker with PostgreSQL unreachable says so in one line and exits 1, not with a stack', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'worker.ts'), '--processes', '1'], {
    env: { ...process.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', REDIS_URL: 'off', LEASEHOLD_LOG: 'info' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const out = r.stdout + r.stderr;
  assert.equal(r.status, 1, out);
  assert.match(out, /cannot reach PostgreSQL \(DATABASE_URL\)/);
  assert.doesNotMatch(out, /^\s+at /m, 'no stack trace');
});
