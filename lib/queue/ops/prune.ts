import { type Executor } from '../../db/client';
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
  /** Jobs that ran or point to a result: dropDeletedResults, once the sweep has let go of its lock. */
  results: PrunedResult[];
}

/** The windows in the statement's order (completed, failed, cancelled); null where kept for ever (0 too). */
const windowsOf = (r: Retention) => [r.completedMs, r.failedMs, r.cancelledMs].map((w) => (w !== null && w > 0 ? w : null));
export const keeps = (r: Retention | null | undefined): r is Retention => !!r && windowsOf(r).some((w) => w !== null);

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
