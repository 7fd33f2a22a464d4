import type { Executor } from '../../db/client';
import { QueueError } from '../errors';
import * as sql from '../statements';
import { run } from './internal';

/** A job type as a worker registers it (the built-in ones are not registered: lib/job-types.ts). */
export interface JobTypeRegistration {
  name: string;
  description: string | null;
  /** JSON Schema of the payload; null: any JSON object. */
  payloadSchema: Record<string, unknown> | null;
  timeoutMs: number | null;
  /** Attempts for a job of this type enqueued without maxAttempts; null: DEFAULT_MAX_ATTEMPTS. */
  maxAttempts: number | null;
}

export interface RegisteredJobType extends JobTypeRegistration {
  registeredAt: Date;
  seenAt: Date;
}

/** jobTypesRegister — a starting worker's job types (see statements/workers.ts). */
export async function jobTypesRegister(db: Executor, types: readonly JobTypeRegistration[]): Promise<void> {
  if (types.length) await run(db, sql.jobTypesRegister, [JSON.stringify(types)]);
}

export async function jobTypesRegistered(db: Executor): Promise<RegisteredJobType[]> {
  return (await run(db, sql.jobTypesList, [])).rows.map((r) => ({
    name: r.name,
    description: r.description,
    payloadSchema: r.payload_schema,
    timeoutMs: r.timeout_ms,
    maxAttempts: r.max_attempts,
    registeredAt: r.registered_at,
    seenAt: r.seen_at,
  }));
}

/**
 * Registers a worker process. Returns the counters its id reported before (`previous`: a
 * runner given a fixed workerId, restarted; empty for a new id), which its reports then add
 * to: the scrape sums every worker row, and a row whose counters started again from zero
 * looked to Prometheus like a counter reset, so rate() counted its whole past again.
 */
export async function workerRegister(
  db: Executor,
  w: { workerId: string; host: string; pid: number; queues: readonly string[]; concurrency: number; types?: readonly string[] | null },
): Promise<{ previous: Record<string, unknown> }> {
  const { rows } = await run(db, sql.workerRegister, [w.workerId, w.host, w.pid, w.queues, w.concurrency, w.types ?? null]);
  return { previous: rows[0]?.metrics ?? {} };
}

/**
 * The process is alive (its counters so far); answers whether an operator has quieted it,
 * and the request's token, which the process reports as its `quiet` once it claims nothing.
 */
export async function workerHeartbeat(db: Executor, workerId: string, metrics: unknown = {}): Promise<{ quiet: boolean; quietToken: string | null }> {
  const { rows } = await run(db, sql.workerHeartbeat, [workerId, JSON.stringify(metrics)]);
  return { quiet: rows[0]?.quiet === true, quietToken: rows[0]?.quiet_token ?? null };
}

/**
 * workerSetQuiet — quiet (or resume) running worker processes: a quiet one claims no new job
 * and finishes those in hand; it reads the request with its next heartbeat (a third of a
 * lease by default). Answers the ids it changed (one stopped, unknown, or already so is not).
 */
export async function workerSetQuiet(db: Executor, p: { workerIds: readonly string[]; quiet: boolean; by: string }): Promise<string[]> {
  const { rows } = await run(db, sql.workerQuiet, [p.workerIds, p.quiet, p.by]);
  return rows.map((r) => r.worker_id as string);
}

/**
 * One worker quieted or resumed (the console's and the API's): whether it changed, and the
 * quiet request's token (a process quieting itself adopts it at once: worker/process.ts);
 * not_found for no such worker, state_forbids for one that has stopped (it claims nothing anyway).
 */
export async function workerQuietOne(
  db: Executor,
  p: { workerId: string; quiet: boolean; by: string },
): Promise<{ changed: boolean; quietToken: string | null }> {
  const changed = (await workerSetQuiet(db, { ...p, workerIds: [p.workerId] })).length > 0;
  if (changed && !p.quiet) return { changed, quietToken: null };
  const { rows } = await run(db, sql.workerQuietState, [p.workerId]);
  if (changed) return { changed, quietToken: rows[0]?.quiet_token ?? null };
  if (!rows[0]) throw new QueueError('not_found', `no worker ${JSON.stringify(p.workerId.slice(0, 120))}`);
  if (rows[0].stopped) throw new QueueError('state_forbids', 'the worker has stopped: it claims nothing');
  if (p.quiet && !rows[0].quiet && !rows[0].reads_quiet) {
    throw new QueueError('state_forbids', 'the worker does not read quiet requests: it runs an earlier version, or has not reported since it started (its first heartbeat comes within a third of a lease)');
  }
  return { changed: false, quietToken: rows[0].quiet_token ?? null };
}

export async function workerStop(db: Executor, workerId: string, metrics: unknown = {}) {
  await run(db, sql.workerStop, [workerId, JSON.stringify(metrics)]);
}

/**
 * A worker process on `host` ended without stopping (see statements.workerDied): its row is
 * marked, and when its worker id is known the leases it held end now. Returns the worker id
 * marked (null: none) and how many leases ended.
 */
export async function workerDied(
  db: Executor,
  p: { host: string; pid: number; exit: string; workerId?: string | null },
): Promise<{ workerId: string | null; leasesEnded: number }> {
  const { rows } = await run(db, sql.workerDied, [p.host, p.pid, p.exit, p.workerId ?? null]);
  return { workerId: rows[0]?.worker_id ?? null, leasesEnded: rows[0]?.leases_ended ?? 0 };
}
