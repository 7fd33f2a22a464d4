/** The held-jobs ledger a worker process keeps for its supervisor (worker/held-ledger.ts), on real files. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { HeldLedger, readHeldLedger } from './held-ledger';

const lease = (id: number, attempt = 1) => ({ jobId: String(id), attempt });

/** Runs `fn` with a directory of its own, removed after. */
function inTempDir(fn: (dir: string) => void) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-ledger-'));
  try {
    fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('what was said held and not started, forgotten or compacted away is what the file tells', () => {
  inTempDir((dir) => {
    const file = path.join(dir, 'held');
    const ledger = HeldLedger.open(file, 'host:1:ab', (err) => assert.fail(String(err)))!;
    ledger.held([lease(1), lease(2), lease(3, 2)]);
    ledger.starting([lease(1), lease(9)]); // 9 was never held: nothing to say
    ledger.forget([lease(2)]); // handed back: the release's fence refuses it anyway
    assert.deepEqual(readHeldLedger(file), { workerId: 'host:1:ab', leases: [lease(2), lease(3, 2)] }, 'forget writes nothing');
    // A start of another attempt of job 3 is not this attempt's.
    ledger.starting([lease(3, 1)]);
    assert.deepEqual(readHeldLedger(file)?.leases, [lease(2), lease(3, 2)]);
    // Past the compaction size the file is replaced by what is still held (job 2 forgotten).
    for (let k = 100; k < 30_100; k += 2) {
      ledger.held([lease(k), lease(k + 1)]);
      ledger.starting([lease(k)]);
      if (k % 100 !== 0) ledger.starting([lease(k + 1)]);
    }
    const { workerId, leases: held } = readHeldLedger(file)!;
    assert.equal(workerId, 'host:1:ab', 'the worker line survives compaction');
    assert.equal(held.length, 300 + 1, 'every hundredth one still held, and job 3');
    assert.ok(fs.statSync(file).size < 300 * 1024, `compacted: ${fs.statSync(file).size} bytes`);
    assert.ok(held.some((l) => l.jobId === '3' && l.attempt === 2) && held.some((l) => l.jobId === '30001'));
    assert.ok(!held.some((l) => l.jobId === '2'), 'the forgotten job is not written again');
    ledger.close();
    assert.equal(fs.existsSync(file), false);
    assert.equal(readHeldLedger(file), null, 'no file: nothing held');
  });
});

test('a line cut short by the kill is left out: a held one is not trusted, a started one was not needed', () => {
  inTempDir((dir) => {
    const file = path.join(dir, 'held');
    fs.writeFileSync(file, 'w h:1:ab\nh 1:1 2:1\ns 1:1\nh 5:1 6');
    assert.deepEqual(readHeldLedger(file), { workerId: 'h:1:ab', leases: [lease(2)] });
    fs.writeFileSync(file, 'w h:1:ab\nh 1:1 2:1\ns 2:');
    assert.deepEqual(readHeldLedger(file)?.leases, [lease(1), lease(2)]);
    fs.writeFileSync(file, 'w h:1:a');
    assert.equal(readHeldLedger(file), null, 'the worker line cut short: no fence to release with');
  });
});

test('a write that fails (a full disk) turns the ledger off and leaves a file that says nothing, never one that hides a start', () => {
  inTempDir((dir) => {
    // No file can be made: no ledger, and why is told.
    const failures: unknown[] = [];
    assert.equal(HeldLedger.open(path.join(dir, 'missing', 'held'), 'w:1', (e) => failures.push(e)), null);
    assert.equal(failures.length, 1);
    // Writes that fail part way (a process allowed 300 bytes of file: EFBIG, as a full disk's
    // ENOSPC): off from then on, said once, and the file emptied — not one whose cut line
    // reads a started job as held.
    const file = path.join(dir, 'held');
    const script = `
      import { HeldLedger } from ${JSON.stringify(path.join(import.meta.dirname, 'held-ledger.ts'))};
      const told = [];
      const l = HeldLedger.open(${JSON.stringify(file)}, 'w:1', (e) => told.push(e.code));
      for (let k = 1; k <= 40; k++) { l.held([{ jobId: String(k), attempt: 1 }]); l.starting([{ jobId: String(k), attempt: 1 }]); }
      console.log(JSON.stringify(told));`;
    const r = spawnSync('prlimit', ['--fsize=300', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), ['EFBIG']);
    assert.equal(fs.statSync(file).size, 0);
    assert.equal(readHeldLedger(file), null, 'no worker line: nothing is released');
  });
});
