/**
 * A LEASEHOLD_HANDLERS module with a poison job that never yields its event loop (a
 * catastrophic regex, a synchronous infinite loop): worker/worker.db.test.ts.
 */
import type { Handler } from '../../worker/handlers/types';

export const handlers: Record<string, Handler> = {
  'test.spin': () => {
    for (;;) {
      // never returns, never yields
    }
  },
};
