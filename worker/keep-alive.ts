/**
 * npm start's two children (the console and the worker supervisor): each kept alive,
 * restarted when it dies, with a back-off while it keeps dying within 10 s of its start.
 */
import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../lib/log';

export function keepAlive(name: string, start: () => ChildProcess, o: { log: Logger; stopping: () => boolean }) {
  let child: ChildProcess;
  let quick = 0;
  const run = () => {
    const t0 = Date.now();
    child = start();
    const ended = (code: number | null, signal: NodeJS.Signals | null) => {
      if (o.stopping()) return;
      quick = Date.now() - t0 < 10_000 ? quick + 1 : 0;
      const delay = Math.min(30_000, quick <= 1 ? 0 : 500 * 2 ** quick);
      o.log.warn(`${name} exited; restarting`, { code, signal, restartInMs: delay });
      setTimeout(() => !o.stopping() && run(), delay);
    };
    child.on('exit', ended);
    // A start that fails (no memory, pids or file descriptors left) emits 'error' and never
    // 'exit': tried again like a child that died, not an uncaught error ending npm start
    // (its embedded server left running). Other errors (a failed kill) come from a running
    // child, whose 'exit' follows in its time.
    const begun = child;
    begun.on('error', (err) => {
      o.log.error(`could not start the ${name}`, { err });
      if (begun.pid === undefined) ended(null, null);
    });
  };
  run();
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
