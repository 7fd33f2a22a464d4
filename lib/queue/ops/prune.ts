import type { Executor } from '../../db/client';
import { log } from '../../log';
import type { ResultStore } from '../../results';
import * as sql from '../statements';
import { run } from './internal';

/** How long finished jobs are kept, per status (null: for ever). */
export interface Retention {
  completedMs: number | null;
  failedMs: number | null;
  cancelledMs: number | null;
}

/** Ids one prune statement reads: a range of the primary key (the statement stays short). */
export const PRUNE_RANGE = 5_000;
/** Most time one sweep spends pruning (statement after statement): the rest waits for the next sweep. */
export const PRUNE_BUDGET_MS = 500;
/**
 * After a walk reached the young jobs (or the table's end), the next one waits this long:
 * deleting a week-old job a minute later costs nothing, while walking again at once would
 * re-read every job kept longer (a dead letter kept for ever), sweep after sweep, for nothing.
 */
export const PRUNE_REST_MS = 60_000;

/** A deleted job whose results are to be deleted: [job id, the result it pointed to or null]. */
export type PrunedResult = [jobId: string, key: string | null];

export interface PruneReport {
  /** Jobs deleted (their attempt history with them). */
  deleted: number;
  /** Ids read. */
  scanned: number;
  /** Where the next range starts: '0' once a range reached young jobs or the end of the table. */
  cursor: string;
  /** The walk rests (see PRUNE_REST_MS): nothing was read. */
  resting: boolean;
  /** Jobs that ran or point to a result: deleted once the sweep has let go of its lock, in the background (dropDeletedResultsLater). */
  results: PrunedResult[];
}

/** The windows in the statement's order (completed, failed, cancelled); null where kept for ever (0 too). */
const windowsOf = (r: Retention) => [r.completedMs, r.failedMs, r.cancelledMs].map((w) => (w !== null && w > 0 ? w : null));
/** Does this retention delete anything (a window set for some status)? */
export const retentionPrunes = (r: Retention | null | undefined): r is Retention => !!r && windowsOf(r).some((w) => w !== null);

/**
 * jobPrune — retention, one range of ids from `cursor` (see statements.jobPrune): deletes the
 * finished jobs of the range past their status's window, with their attempt history.
 */
export async function jobPrune(
  db: Executor,
  p: { retention: Retention; cursor: string; range?: number },
): Promise<Omit<PruneReport, 'resting'>> {
  const windows = windowsOf(p.retention);
  const set = windows.filter((v): v is number => v !== null);
  if (!set.length) return { deleted: 0, scanned: 0, cursor: p.cursor, results: [] };
  const range = p.range ?? PRUNE_RANGE;
  const { rows } = await run(db, sql.jobPrune, [p.cursor, range, ...windows, Math.min(...set)]);
  const r = rows[0];
  const atEnd = r.young || r.scanned < range;
  return { deleted: r.deleted, scanned: r.scanned, cursor: atEnd || r.last_id === null ? '0' : r.last_id, results: r.results };
}

/**
 * pruneFor — the walk every sweeping process shares (its position in retention_walk): ranges
 * one after another from where it stands, until the budget is spent or the walk reaches
 * young jobs; then it rests `restMs` (for every process) before it starts again from the
 * bottom. Run under the sweep's lock (recoverSweep), so one process walks at a time.
 */
export async function pruneFor(
  db: Executor,
  p: { retention: Retention; budgetMs?: number; range?: number; restMs?: number },
): Promise<PruneReport> {
  const walk = (await run(db, sql.pruneWalkRead, [])).rows[0] ?? { cursor: '0', resting: false };
  const out: PruneReport = { deleted: 0, scanned: 0, cursor: walk.cursor, resting: walk.resting, results: [] };
  if (out.resting) return out;
  const until = performance.now() + (p.budgetMs ?? PRUNE_BUDGET_MS);
  do {
    const r = await jobPrune(db, { ...p, cursor: out.cursor });
    out.deleted += r.deleted;
    out.scanned += r.scanned;
    out.cursor = r.cursor;
    out.results.push(...r.results);
  } while (out.cursor !== '0' && performance.now() < until);
  await run(db, sql.pruneWalkWrite, [out.cursor, out.cursor === '0', p.restMs ?? PRUNE_REST_MS]);
  return out;
}

/**
 * Deletes the result blobs no job points to any more (a deleted job's, a requeued job's
 * last result): nothing else would, and an administrator deleting jobs expects their
 * results gone too. After the statement that let them go has committed — callers pass a
 * pool, not a transaction — so a rollback can never leave a job pointing to a deleted blob.
 * A blob that cannot be deleted is logged and left (the action itself has happened).
 */
export async function dropResults(results: ResultStore | null | undefined, keys: (string | null)[]) {
  if (!results) return;
  await eachAtMost(RESULT_DELETES_AT_ONCE, keys.filter((k): k is string => !!k), (key) =>
    results.delete(key).catch((err) => log.warn('could not delete a result no job points to any more', { key, err })),
  );
}

/**
 * Deletes the results of deleted jobs (an operator's delete, retention): every result of
 * each, where the store can find them (an attempt that crashed after writing its result
 * left one nothing points to), else the one each pointed to. After the statement has
 * committed — and for retention, after the sweep has let go of its lock and connection. A
 * result that cannot be deleted is logged and left.
 */
export async function dropDeletedResults(results: ResultStore | null | undefined, jobs: readonly PrunedResult[]) {
  if (!results || !jobs.length) return;
  const deleteAll = results.deleteAll?.bind(results);
  if (!deleteAll) return dropResults(results, jobs.map((j) => j[1]));
  await eachAtMost(RESULT_DELETES_AT_ONCE, jobs, ([id]) =>
    deleteAll(id).catch((err) => log.warn('could not delete the results of a deleted job', { job: id, err })),
  );
}

/** Pruned jobs' results still to delete, per store, and whether a deleter runs for it. */
const dropsPending = new WeakMap<ResultStore, { jobs: PrunedResult[]; running: Promise<void> | null }>();

/**
 * dropDeletedResults in the background, a thousand jobs at a time, one deleter per store: a
 * prune of 100,000 jobs that ran has as many results, tens of seconds of filesystem calls
 * that neither the sweep that pruned them nor the next ones may wait behind (a process whose
 * sweep is busy sweeps nothing: expired leases of paused queues wait). Returns the deleter
 * (resultsDeleting).
 */
export function dropDeletedResultsLater(results: ResultStore | null | undefined, jobs: readonly PrunedResult[]): Promise<void> {
  if (!results) return Promise.resolve();
  let pending = dropsPending.get(results);
  if (!pending) dropsPending.set(results, (pending = { jobs: [], running: null }));
  for (const j of jobs) pending.jobs.push(j);
  const p = pending;
  if (!p.jobs.length) return p.running ?? Promise.resolve();
  p.running ??= (async () => {
    try {
      while (p.jobs.length) await dropDeletedResults(results, p.jobs.splice(0, 1_000));
    } catch (err) {
      log.warn('could not delete the results of pruned jobs; they are left', { err });
    } finally {
      // Here, not a promise's turn later: jobs added in between would wait for the next prune.
      p.running = null;
    }
  })();
  return p.running;
}

/** The store's deleter while one runs (a stopping worker waits for it; tests too), resolved at once when none does. */
export const resultsDeleting = (results: ResultStore | null | undefined): Promise<void> => (results && dropsPending.get(results)?.running) || Promise.resolve();

/**
 * Pruned jobs' results waiting for the deleter past which a sweep prunes no more until it
 * has caught up: a prune deletes jobs faster than a filesystem deletes their results, and
 * what waits here is lost, orphaned, if the process ends.
 */
export const RESULTS_PENDING_MAX = 20_000;
export const resultsPending = (results: ResultStore | null | undefined) => (results ? (dropsPending.get(results)?.jobs.length ?? 0) : 0);

/**
 * Result deletes in flight at once: one at a time, a bulk delete of 1,000 jobs with
 * results spent 0.5–1.2 s in the filesystem; 16 at once, 0.3–0.4 s, without opening
 * a thousand files together.
 */
const RESULT_DELETES_AT_ONCE = 16;

/** Runs `f` on every item, at most `n` at a time. */
async function eachAtMost<T>(n: number, items: readonly T[], f: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await f(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
}
