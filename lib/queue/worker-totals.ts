/**
 * The workers' counters summed over every worker row (each process writes its own with its
 * heartbeat; every incarnation counts, so they survive restarts): what the console's charts
 * and the stats history are made of.
 */
import type { Executor } from '../db/client';

export interface WorkerTotals {
  claimed: number;
  completed: number;
  failed: number;
  retried: number;
  cancelled: number;
  leaseLost: number;
  recovered: number;
}

const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));

/** Only the workers' counters (the throughput sampler reads these between full refreshes). */
export async function readWorkerTotals(db: Executor): Promise<{ totals: WorkerTotals; dbNow: Date }> {
  const { rows } = await db.query(
    `SELECT coalesce(sum((metrics->>'claimed')::float8), 0) AS claimed, coalesce(sum((metrics->>'completed')::float8), 0) AS completed,
            coalesce(sum((metrics->>'failed')::float8), 0) AS failed, coalesce(sum((metrics->>'retried')::float8), 0) AS retried,
            coalesce(sum((metrics->>'cancelled')::float8), 0) AS cancelled, coalesce(sum((metrics->>'leaseLost')::float8), 0) AS "leaseLost",
            coalesce(sum((metrics->>'recovered')::float8), 0) AS recovered, now() AS db_now
       FROM workers`,
  );
  const r = rows[0];
  return {
    totals: {
      claimed: num(r.claimed),
      completed: num(r.completed),
      failed: num(r.failed),
      retried: num(r.retried),
      cancelled: num(r.cancelled),
      leaseLost: num(r.leaseLost),
      recovered: num(r.recovered),
    },
    dbNow: r.db_now,
  };
}
