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
