/**
 * Notices that this process's parent has gone away (it was killed, even with SIGKILL, or it
 * exited without passing a signal on, as `npm start` does) and calls `onGone` once: the
 * process is re-parented, so its parent pid changes. Without this a child outlives whoever
 * started it: an orphaned worker supervisor keeps its workers claiming jobs on old code
 * and settings, next to the ones a second `npm start` brings up. Plain JavaScript: the
 * console's preload (http-guard.mjs) runs before TypeScript can be loaded.
 */
export function watchParent(onGone, everyMs = 500) {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, everyMs);
  timer.unref();
}

/**
 * Whether a command (start, web, worker) should stop when its parent goes: when npm or npx
 * ran it (`npm start`, `npx leasehold worker`), since they exit without passing a signal on,
 * or when a process of ours forked it (`forked`: it has our IPC channel). Run from a shell,
 * `nohup` or a process manager, a parent's exit is no request to stop:
 * `nohup node worker/bin/start.ts &` must outlive the shell that ran it, and a terminal
 * that closes sends SIGHUP, which each command handles.
 */
export function stopsWithParent(env = process.env, forked = typeof process.send === 'function') {
  return forked || Boolean(env.npm_lifecycle_event) || env.npm_command === 'exec';
}
