/**
 * The chaos scenarios' job handler, loaded into the workers with LEASEHOLD_HANDLERS. It
 * writes a ledger of what really happened — each start, each side effect, each abort —
 * outside the queue's own bookkeeping, so duplicates and losses are counted from facts.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Handler } from '../../worker/handlers/types';

// The ledger is the test's instrument, not the system under test: a scenario that breaks the
// worker's own connections (silence) keeps the ledger on a direct one.
const pool = new pg.Pool({
  connectionString: process.env.CHAOS_LEDGER_URL ?? process.env.DATABASE_URL,
  max: 4,
  application_name: 'chaos-ledger',
});
pool.on('error', () => {});

/**
 * How long a ledger write is tried again while the database does not answer (0: not at all,
 * the handler fails). A scenario that restarts PostgreSQL under jobs whose leases outlast the
 * outage sets it, as a handler that must not fail over a short outage would: each write
 * carries its own id, so one that committed before its answer was lost is not written twice.
 */
const patienceMs = Number(process.env.CHAOS_LEDGER_PATIENCE_MS ?? 0);

async function ledger(jobId: string, attempt: number, event: 'start' | 'effect' | 'abort') {
  // `wall`: this process's own clock, beside the database's (`at`): a skewed host's shows.
  const row = [jobId, attempt, process.pid, event, new Date(), randomUUID()];
  const until = Date.now() + patienceMs;
  for (;;) {
    try {
      await pool.query(`INSERT INTO chaos_effects (job_id, attempt, pid, event, wall, write_id) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (write_id) DO NOTHING`, row);
      return;
    } catch (err) {
      if (Date.now() >= until) throw err;
      await sleep(100);
    }
  }
}

/**
 * `{ms, noResult?}`: records its start, works for `ms`, records its side effect, returns a
 * result — or nothing with `noResult`, which takes the worker's other way to a completion
 * (the batched one for handlers with nothing to store, the common case in production).
 */
const work: Handler = async (payload: { ms: number; noResult?: boolean }, ctx) => {
  await ledger(ctx.job.id, ctx.attempt, 'start');
  ctx.signal.addEventListener('abort', () => void ledger(ctx.job.id, ctx.attempt, 'abort').catch(() => {}), { once: true });
  await sleep(payload.ms, undefined, { signal: ctx.signal });
  await ledger(ctx.job.id, ctx.attempt, 'effect');
  return payload.noResult ? undefined : { ok: true, attempt: ctx.attempt };
};

export const handlers: Record<string, Handler> = { 'chaos.work': work };

/** The ledger table, created in each scenario's database. */
export const LEDGER_DDL = `
CREATE TABLE IF NOT EXISTS chaos_effects (
  job_id bigint NOT NULL,
  attempt int NOT NULL,
  pid int NOT NULL,
  event text NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp(),
  wall timestamptz,
  write_id uuid UNIQUE
)`;
