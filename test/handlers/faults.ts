/**
 * A LEASEHOLD_HANDLERS module for worker/faults.db.test.ts: handlers that keep a ledger of
 * their starts and ends in a file (outside the queue's own bookkeeping), so the test can
 * count what really ran.
 *  - test.wait {ledger, until, clock}: runs until the file `until` exists, writing this
 *    process's wall clock (Date.now()) to `clock` as it waits (the test reads it to know a
 *    libfaketime step has reached the process).
 *  - test.block {ledger, ms}: on its first attempt blocks its event loop for `ms` (a
 *    synchronous loop: no timer, no heartbeat, no I/O runs meanwhile), then returns.
 *  - test.sleep {ledger, ms}: waits `ms`. Its starts and ends, appended in the order they
 *    happen by every process, tell how many handlers ever ran at once (a limit's test).
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Handler } from '../../worker/handlers/types';

const note = (ledger: string, event: string, id: string, attempt: number) =>
  fs.appendFileSync(ledger, `${event} ${id} ${attempt} ${process.pid}\n`);

export const handlers: Record<string, Handler> = {
  'test.wait': async (p: { ledger: string; until: string; clock: string }, ctx) => {
    note(p.ledger, 'start', ctx.job.id, ctx.attempt);
    while (!fs.existsSync(p.until)) {
      fs.writeFileSync(p.clock, String(Date.now()));
      await sleep(50, undefined, { signal: ctx.signal });
    }
    note(p.ledger, 'end', ctx.job.id, ctx.attempt);
    return { attempt: ctx.attempt, pid: process.pid };
  },
  'test.sleep': async (p: { ledger: string; ms: number }, ctx) => {
    note(p.ledger, 'start', ctx.job.id, ctx.attempt);
    await sleep(p.ms, undefined, { signal: ctx.signal });
    note(p.ledger, 'end', ctx.job.id, ctx.attempt);
  },
  'test.block': async (p: { ledger: string; ms: number }, ctx) => {
    note(p.ledger, 'start', ctx.job.id, ctx.attempt);
    if (ctx.attempt === 1) {
      const until = performance.now() + p.ms;
      while (performance.now() < until) {
        // blocks the whole process: its heartbeats, its watchdog, its beat to the supervisor
      }
    }
    note(p.ledger, 'end', ctx.job.id, ctx.attempt);
    return { attempt: ctx.attempt, pid: process.pid };
  },
};
