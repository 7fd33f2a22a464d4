/**
 * The sign-in limiter at its key bound, filled with blocked keys (a spray from many addresses):
 * how long one more failure takes to count, making room as it goes.
 *   node --import tsx scripts/limiter-bench.ts
 */
import { MAX_KEYS, MAX_PER_ADDRESS, SignInLimiter } from '../lib/auth/rate-limit';

const limiter = new SignInLimiter();
const t0 = 1e9;
// Each address blocks five accounts and itself: six blocked keys per 50 failures, past the bound.
for (let a = 0; a * 6 < MAX_KEYS + 12; a++) {
  for (let k = 0; k < MAX_PER_ADDRESS; k++) limiter.failed(`filler-${a}-${k % 5}`, `10.66.${a >> 8}.${a & 255}`, t0);
}
const n = 1_000;
const start = performance.now();
for (let i = 0; i < n; i++) limiter.failed(`x-${i}`, `10.1.${i >> 8}.${i & 255}`, t0 + 1);
console.log(`${((performance.now() - start) / n).toFixed(3)} ms per failure, the map full of blocked keys (${MAX_KEYS} keys)`);
