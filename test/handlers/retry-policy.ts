/**
 * A LEASEHOLD_HANDLERS module with retry policies (lib/retry-policy.db.test.ts). Its errors
 * come from the package's entry, as a user's module gets them: client.mjs loads its own copy
 * of the sources, so the worker must recognise them without instanceof.
 */
import { PermanentError, RetryError, SnoozeError } from 'leasehold';

export const handlers = {
  'sync.flaky': async () => {
    throw new Error('upstream down');
  },
  'sync.limited': async () => {
    throw new RetryError('429 Too Many Requests', { afterMs: 5_400_000 });
  },
  'sync.invalid': async () => {
    throw new PermanentError('the account does not exist');
  },
  // Not ready on its first run: put off for 300 ms, then done.
  'sync.export': async (_payload: unknown, ctx: { attempt: number }) => {
    if (ctx.attempt === 1) throw new SnoozeError('the export is not ready yet', { afterMs: 300 });
    return { fetched: true };
  },
};

export const jobTypes = {
  // An hour's backoff from the first failure: its retry is 30-60 minutes away, not 0.5-1 s.
  'sync.flaky': { maxAttempts: 5, backoff: { baseMs: 3_600_000, maxMs: 7_200_000 } },
  'sync.limited': { maxAttempts: 5 },
  'sync.invalid': { maxAttempts: 5 },
};

export const schedules = [{ name: 'flaky-nightly', cron: '0 3 * * *', type: 'sync.flaky' }];
