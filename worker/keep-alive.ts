/**
 * npm start's two children (the console and the worker supervisor): each kept alive,
 * restarted when it dies, with a back-off while it keeps dying within 10 s of its start.
 */
import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../lib/log';

export function keepAlive(
  name: string,
  start: () => ChildProcess,
  o: {
    log: Logger;
    /** An exit code that means a restart would fail the same way (EXIT_CONFIG): not restarted, onFinal told instead. */
    finalCode?: number;
    onFinal?: () => void;
  },
) {
  let child: ChildProcess | null = null;
  let quick = 0;
  let stopped = false;
  let restartTimer: NodeJS.Timeout | null = null;
  const restart = (t0: number, what: string, fields: Record<string, unknown>) => {
    if (stopped) return;
    quick = Date.now() - t0 < 10_000 ? quick + 1 : 0;
    const delay = Math.min(30_000, quick <= 1 ? 0 : 500 * 2 ** quick);
    o.log.warn(`${name} ${what}; restarting`, { ...fields, restartInMs: delay });
    restartTimer = setTimeout(run, delay);
  };
  // A start that fails (no memory, pids or file descriptors left) is tried again like a child
  // that died, not an uncaught error ending npm start, its embedded server left running. Node
  // reports it one of two ways: thrown by the spawn (ENOMEM, E2BIG), or, for a few errors
  // (EAGAIN, EMFILE, ENFILE, ENOENT, EACCES), as an 'error' event with no 'exit' to follow.
  function run() {
    restartTimer = null;
    const t0 = Date.now();
    let begun: ChildProcess;
    try {
      begun = start();
    } catch (err) {
      child = null;
      return restart(t0, 'could not be started', { err });
    }
    child = begun;
    begun.on('exit', (code, signal) => {
      if (code !== null && code === o.finalCode && !stopped) {
        child = null;
        o.log.error(`${name} exited with code ${code}, which a restart would not mend: not restarting it`);
        return o.onFinal?.();
      }
      restart(t0, 'exited', { code, signal });
    });
    begun.on('error', (err) => {
      if (begun.pid === undefined) restart(t0, 'could not be started', { err });
      // Otherwise a running child's (a failed kill): its 'exit' follows in its time.
      else o.log.warn(`${name}: a signal could not be sent`, { err });
    });
  }
  run();
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        stopped = true;
        if (restartTimer) clearTimeout(restartTimer);
        const c = child;
        if (!c || c.pid === undefined || c.exitCode !== null || c.signalCode !== null) return resolve();
        c.once('exit', () => resolve());
        c.kill('SIGTERM');
      }),
  };
}
