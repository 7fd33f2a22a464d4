/** npm start and npm run web: the port, then the console's build, taken in turns. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../lib/log';
import { assertPortFree, BuildInterrupted, takeBuildTurn } from './web';

test('a port something listens on is refused with why; a free one passes', async () => {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as net.AddressInfo;
  await assert.rejects(assertPortFree(port, '127.0.0.1'), new RegExp(`^Error: port ${port} on 127.0.0.1 is in use: stop what holds it, or set PORT$`));
  await new Promise<void>((resolve) => holder.close(() => resolve()));
  await assertPortFree(port, '127.0.0.1');
});

test('builds take turns: a second start waits for the first to finish, a turn whose builder died is taken over, a stop ends the wait', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-build-turn-'));
  const lock = path.join(dir, 'build.lock');
  const log = createLogger({ test: 'build-turn' });
  try {
    const releaseFirst = await takeBuildTurn(lock, log, () => false);
    let second = false;
    const waiting = takeBuildTurn(lock, log, () => false).then((release) => {
      second = true;
      return release;
    });
    await new Promise((r) => setTimeout(r, 600)); // a few of the waiter's 250 ms looks
    assert.equal(second, false, 'the second waits while the first builds');
    releaseFirst();
    (await waiting)();
    // A builder killed mid-build left its turn behind: the next start takes it over.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    fs.mkdirSync(lock);
    fs.writeFileSync(path.join(lock, 'pid'), dead);
    (await takeBuildTurn(lock, log, () => false))();
    // Stopped (Ctrl-C) while waiting for a live builder (this process): no build, no wait.
    const mine = await takeBuildTurn(lock, log, () => false);
    await assert.rejects(takeBuildTurn(lock, log, () => true), BuildInterrupted);
    mine();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
