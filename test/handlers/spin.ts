/**
 * A LEASEHOLD_HANDLERS module with a poison job that never yields its event loop (a
 * catastrophic regex, a synchronous infinite loop): worker/worker.db.test.ts.
 */
import fs from 'node:fs';
import type { Handler } from '../../worker/handlers/types';

export const handlers: Record<string, Handler> = {
  // `started`: a file written as it starts to spin (a job "running" in the database may not have started yet).
  'test.spin': (payload) => {
    const started = (payload as { started?: unknown } | null)?.started;
    if (typeof started === 'string') fs.writeFileSync(started, '');
    for (;;) {
      // never returns, never yields
    }
  },
};
