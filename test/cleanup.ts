/**
 * Cleanup in reverse order of set-up, after a test file's tests: whatever a test file
 * registers later (pools, processes) is closed before what it registered first (its
 * database) is dropped.
 */
import { after } from 'node:test';

const stack: (() => unknown)[] = [];
let registered = false;

/** Runs every registered cleanup, last first. */
export async function runCleanups() {
  while (stack.length) {
    try {
      await stack.pop()!();
    } catch (err) {
      console.error('cleanup failed:', err);
    }
  }
}

export function cleanup(fn: () => unknown) {
  stack.push(fn);
  if (registered) return;
  registered = true;
  // Under `node --test` the runner calls them; a plain script (npm run chaos) calls runCleanups().
  if (process.env.NODE_TEST_CONTEXT) after(runCleanups);
}
