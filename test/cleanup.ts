/**
 * Cleanup in reverse order of set-up, after a test file's tests: whatever a test file
 * registers later (pools, processes) is closed before what it registered first (its
 * database) is dropped.
 */
import { after } from 'node:test';

const stack: (() => unknown)[] = [];

// Registered when this module loads, at a test file's top level: an after() first called
// from inside a hook (a before() that starts servers) would belong to that hook and run
// as soon as it ended, tearing down what it had just set up. Under `node --test` the
// runner calls it; a plain script (npm run chaos) calls runCleanups() itself.
if (process.env.NODE_TEST_CONTEXT) after(runCleanups);

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
}
