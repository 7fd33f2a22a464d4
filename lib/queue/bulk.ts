/**
 * Operator actions on one job, a selection, or every job matching a filter: a preview of
 * exactly what would be touched, then the action itself, batch by batch, through the very
 * ops functions the worker and the CLI use (so each job is re-checked by its CAS
 * statement at the moment it is touched: a job the action no longer applies to is skipped
 * with the reason).
 *
 * "All matching a filter" is resolved to ids with keyset reads (windows of ids for
 * filters no index serves, as the list does), up to BULK_CAP jobs; a preview returns the
 * newest id it saw (maxId) and the moment it began (finishedBy), and the action, given
 * them back, never touches a job created, or finished, after the preview. The action
 * resolves the filter again and acts only on the jobs as it saw them then (job.ts SeenJobs):
 * one requeued, claimed or finished again while the batches run is left alone.
 */
import type pg from 'pg';
import type { Executor } from '../db/client';
import { QueueError } from './errors';
import { compactFilter, filterSql, type JobFilter, MICROS, PIN_KEYS, SqlParams } from './filters';
import { fingerprintSql } from './fingerprint';
import { compareJobIds, isSuspect, type Job, type Seen, type SeenJobs } from './job';
import {
  actionApplies,
  type ActionOutcome,
  type ActionReport,
  describeRefusal,
  jobCancel,
  jobDelete,
  jobRecover,
  jobRequeue,
  RECOVER_PREVIEW_LIMIT,
  SINGLETON_GROUP,
  SINGLETON_REFUSAL,
  singletonHolders,
} from './ops';
import { createdFloor, finishedFloor, idRange, jobsByIds, type ListedJob, SCAN_WINDOW, windowQuery } from './read';
import type { ResultStore } from '../results';
import type { Doorbell } from './signal';
import type { JobStatus } from './status';

export const BULK_ACTIONS = ['requeue', 'cancel', 'delete', 'recover'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

/** Most jobs one action may touch. */
export const BULK_CAP = 100_000;
/** Ids per ops call (each call is one statement per transition). */
export const OP_BATCH = 1_000;
/** Items listed in a preview and in a report (the counts cover all of them). */
export const PREVIEW_ITEMS = 200;
/** A preview of at most this many jobs says how each stands (`seen`): a selection's limit. */
export const SEEN_ITEMS = 1_000;
export const REPORT_ITEMS = 1_000;
const RESOLVE_BATCH = 5_000;
/**
 * Recover over everything: a preview lists at most this many expired leases (jobRecover's
 * dry run lists no more than 1,000 whatever it is asked), and a run moves at most
 * RECOVER_RUN_ROWS (the rest wait for the next sweep). The two differ, so a preview that
 * reaches its limit is a lower bound (moreMayChange), and the console says so.
 */
export const RECOVER_RUN_ROWS = 10_000;

/**
 * `seen`, with ids: the jobs as the caller's preview showed them; each one that changed
 * since (another status or attempt) is skipped as changed instead of acted on as it is now.
 */
export type BulkTarget = { ids: readonly string[]; seen?: SeenJobs } | { filter: JobFilter } | { all: true };

export interface BulkOptions {
  resetAttempts?: boolean;
  revokeLease?: boolean;
}

export interface BulkItem {
  id: string;
  ok: boolean;
  outcome: ActionOutcome | 'would_change' | 'would_skip';
  /** What happened or would happen, in words; for a skip, why. */
  reason?: string;
  status?: JobStatus;
  queue?: string;
  type?: string;
  workerId?: string | null;
  leaseRemainingMs?: number | null;
}

/**
 * An applied action's report, and for recover over everything every job it moved (items
 * keeps the first REPORT_ITEMS): for the audit entry, not sent by the API.
 */
export type AppliedReport = BulkReport & { movedIds?: string[] };

export interface BulkReport {
  action: BulkAction;
  preview: boolean;
  /** Jobs the action covers (resolved from the ids or the filter). */
  total: number;
  /** Preview: would change / would be skipped. Apply: changed / skipped. */
  changed: number;
  skipped: number;
  byStatus: Partial<Record<JobStatus, number>>;
  /** Jobs per outcome (in a preview, the predicted one). */
  byOutcome: Partial<Record<ActionOutcome, number>>;
  /** Reasons for skips, most frequent first, with one example each. */
  reasons: { reason: string; count: number }[];
  items: BulkItem[];
  itemsTruncated: boolean;
  /** The newest job id the filter was resolved against: give it back to act on the same set. */
  maxId: string | null;
  /** When the filter was resolved (microseconds since 1970, database clock): give it back with maxId. */
  finishedBy: string | null;
  /**
   * A preview of at most SEEN_ITEMS jobs: each one as it stands (status and attempt), to give
   * back with their ids as `seen`, so the action leaves alone any that changed meanwhile.
   */
  seen?: Record<string, Seen>;
  /** recover over everything: due jobs whose wake-up signal is missing (re-rung by the sweep); the first PREVIEW_ITEMS. */
  resignal?: { id: string; queue: string; type: string; status: JobStatus; waitedMs: number }[];
  /** recover over everything: how many due jobs are (or would be) re-rung, all of them. */
  resignalTotal?: number;
  resignalQueues?: { queue: string; signalBacklog: number | null; pushed: number }[];
  /** recover over everything: the most expired leases one run moves. */
  recoverLimit?: number;
  /**
   * recover over everything: `changed` may not be all. In a preview, the listing reached
   * RECOVER_PREVIEW_LIMIT, so at least that many will change (up to recoverLimit); after a
   * run, it reached recoverLimit, so expired leases may remain for the next sweep.
   */
  moreMayChange?: boolean;
}

// ------------------------------------------------------------------ resolving a target

/**
 * Every id matching a filter, newest first, at most `cap` (a 400 above it), with the pins
 * that make the same filter, given back, match no job the resolution could not see: the
 * newest id (maxId) and the moment it began (finishedBy, read first, so a job finishing
 * while it runs is left out rather than let in unseen), and each job as it was seen.
 */
export async function resolveFilter(
  db: Executor,
  filter: JobFilter,
  cap = BULK_CAP,
): Promise<{ ids: string[]; maxId: string | null; finishedBy: string | null; seen: Map<string, Seen> }> {
  const f = compactFilter(filter);
  if (Object.keys(f).filter((k) => !PIN_KEYS.includes(k)).length === 0) {
    throw new QueueError('invalid_request', 'filter: give at least one condition (an action on every job in the table is never implied)');
  }
  f.finishedBy ??= await settledMoment(db);
  const seen = new Map<string, Seen>();
  const range = await idRange(db);
  if (range.max === null || range.min === null) return { ids: [], maxId: null, finishedBy: f.finishedBy, seen };
  const top = f.maxId && BigInt(f.maxId) < range.max ? BigInt(f.maxId) : range.max;
  const p = new SqlParams();
  const { conds, scans } = filterSql({ ...f, maxId: undefined }, p, fingerprintSql());
  // No job below `bottom` matches the filter's time windows (read.ts createdFloor, finishedFloor).
  let bottom = range.min;
  if (scans) {
    for (const floor of [await createdFloor(db, f, top, range.min), await finishedFloor(db, f, top)]) {
      if (floor !== null && floor > bottom) bottom = floor;
    }
  }
  const window = scans ? SCAN_WINDOW : top - bottom + 1n;
  const ids: string[] = [];
  let hi = top;
  while (hi >= bottom) {
    const lo = hi - window + 1n > bottom ? hi - window + 1n : bottom;
    let upper = hi;
    for (;;) {
      const rows = await windowQuery(db, 'job_id::text AS id, status, attempt_count', conds, p.values, scans ? f.status : undefined, lo, upper, RESOLVE_BATCH);
      for (const r of rows) {
        ids.push(r.id);
        seen.set(r.id, { status: r.status, attempt: r.attempt_count });
      }
      if (ids.length > cap) {
        throw new QueueError(
          'invalid_request',
          `more than ${cap.toLocaleString('en')} jobs match this filter, over the limit for one action: narrow it (by status, queue, type or error)`,
        );
      }
      if (rows.length < RESOLVE_BATCH) break;
      upper = BigInt(rows[rows.length - 1]!.id) - 1n;
    }
    hi = lo - 1n;
  }
  return { ids, maxId: String(top), finishedBy: f.finishedBy, seen };
}

/** How long a preview waits for the writes in flight at its moment to end (see settledMoment). */
export const SETTLE_WAIT_MS = 2_000;

/**
 * The moment a filter is pinned to (finishedBy), once the writes in flight at it have
 * ended. A statement stamps finished_at (and a requeue's run_at) with its transaction's
 * start, and its rows show only when it commits: one that began before the moment and
 * committed after the preview's reads (a recover sweep failing 5,000 jobs in one
 * statement, a worker's batch of failures waiting on a row lock) would match the pin at
 * the action while its jobs were absent from the preview. Waiting until every transaction
 * of this database that held a transaction id at the moment has ended (pg_stat_activity's
 * backend_xid, shown to every role; a cluster-wide snapshot would also wait for other
 * databases' transactions) puts those jobs in the preview instead. Bounded: a transaction
 * left open (a forgotten psql session) is waited for only so long. (A statement that has
 * written nothing yet holds no transaction id: one blocked on its first row's lock across
 * the moment, or a locking read like a requeue's, can still escape.)
 */
async function settledMoment(db: Executor): Promise<string> {
  const inFlight = `SELECT pid, backend_xid::text AS xid FROM pg_stat_activity
                     WHERE datname = current_database() AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()`;
  const { rows } = await db.query(
    `SELECT ${MICROS('now()')}::text AS us, coalesce((SELECT json_agg(json_build_array(pid, xid)) FROM (${inFlight}) t), '[]') AS open`,
  );
  const us = rows[0].us as string;
  let open = rows[0].open as [number, string][];
  const deadline = performance.now() + SETTLE_WAIT_MS;
  for (let pause = 2; open.length && performance.now() < deadline; pause = Math.min(pause * 2, 50)) {
    await new Promise((r) => setTimeout(r, pause));
    // Still open: the same backend with the same transaction id.
    const now = new Set((await db.query(inFlight)).rows.map((r) => `${r.pid}:${r.xid}`));
    open = open.filter(([pid, xid]) => now.has(`${pid}:${xid}`));
  }
  return us;
}

/** A bulk target with its filter resolved to ids (or the whole sweep, for recover). */
export type ResolvedTarget = { all: true } | { ids: string[]; maxId: string | null; finishedBy: string | null; seen?: SeenJobs };

/**
 * The ids a bulk action will act on (a read: a filter over the cap is a 400 here). Callers
 * resolve before they open the action's audit entry, so a refused filter leaves none.
 */
export async function resolveTarget(db: Executor, target: BulkTarget): Promise<ResolvedTarget> {
  if ('ids' in target) return { ids: [...new Set(target.ids)], maxId: null, finishedBy: null, seen: target.seen };
  if ('filter' in target) return resolveFilter(db, target.filter);
  return { all: true };
}

async function currentRows(db: Executor, ids: readonly string[]): Promise<Map<string, ListedJob>> {
  const out = new Map<string, ListedJob>();
  for (let k = 0; k < ids.length; k += OP_BATCH) {
    const { jobs } = await jobsByIds(db, ids.slice(k, k + OP_BATCH));
    for (const j of jobs) out.set(j.id, j);
  }
  return out;
}

// ------------------------------------------------------------------ preview

/** What `action` would do to this job as it stands now (the action re-checks it). */
export function predict(action: BulkAction, job: ListedJob & { singletonHolder?: string | null }, o: BulkOptions): { change: boolean; outcome: ActionOutcome; reason: string } {
  // (A prediction on this server's clock; the statement decides on the database's.)
  const kind = action === 'requeue' && o.revokeLease ? 'revoke' : action;
  if (!actionApplies(kind, job)) return { change: false, outcome: 'skipped', reason: describeRefusal(kind, job) };
  const owner = job.workerId ?? 'unknown worker';
  const fresh = o.resetAttempts ? '; a fresh attempt budget' : '';
  switch (action) {
    case 'requeue':
      if (job.status === 'running') {
        const left = Math.max(0, Math.round((job.leaseRemainingMs ?? 0) / 1000));
        return {
          change: true,
          outcome: 'revoked',
          reason:
            (job.leaseRemainingMs ?? 0) > 0
              ? `lease held by ${owner} (${left} s left) is revoked; ${owner} can no longer write for it${fresh}`
              : `expired lease of ${owner} is revoked${fresh}`,
        };
      }
      if (job.status === 'queued') return { change: true, outcome: 'requeued', reason: `scheduled for ${job.runAt.toISOString()} → due now` };
      return { change: true, outcome: 'requeued', reason: `${job.status} → queued${o.resetAttempts ? ' with a fresh attempt budget' : ''}${suspectWarning(job)}` };
    case 'cancel':
      if (job.status === 'running') return { change: true, outcome: 'cancel_requested', reason: `${owner} is asked to stop at its next heartbeat` };
      return { change: true, outcome: 'cancelled', reason: `${job.status} → cancelled` };
    case 'delete':
      return { change: true, outcome: 'deleted', reason: `${job.status}: deleted with its attempts${job.status === 'completed' ? ' and its result' : ''}` };
    case 'recover': {
      const to = job.cancelRequestedAt ? 'cancelled' : job.attemptCount >= job.maxAttempts ? 'failed' : 'retrying';
      return { change: true, outcome: 'recovered', reason: `lease of ${owner} expired ${Math.round(-(job.leaseRemainingMs ?? 0) / 1000)} s ago → ${to}` };
    }
  }
}

/**
 * Said when a job that may crash its worker is sent back to run: the operator asked to run a
 * likely poison job again (it still runs as a suspect, one per worker, but the jobs that
 * worker runs beside it lose their attempt if it crashes the process again).
 */
const suspectWarning = (job: Pick<ListedJob, 'leaseLostStreak'>) =>
  isSuspect(job)
    ? `; a suspect: its last ${job.leaseLostStreak} attempts ended with their worker gone (a likely poison job), and it may take down the worker that runs it again, with the jobs beside it`
    : '';

const groupReason = (r: string) => r.replace(/\b\d+ s\b/g, 'N s').replace(SINGLETON_REFUSAL, SINGLETON_GROUP);
/** A group's reason: its first, but for singleton refusals, which name a job and a key of their own. */
const groupText = (key: string, first: string) => (key.startsWith(SINGLETON_GROUP) ? key : first);

/**
 * The order a bulk requeue takes its ids in, batch by batch: oldest first, so of finished jobs
 * sharing a singleton key the oldest takes it (as the preview predicts, ops.singletonHolders),
 * in whichever batch the others fall.
 */
export const requeueOrder = (ids: readonly string[]) => [...ids].sort(compareJobIds);

function tally(report: BulkReport, reasonCounts: Map<string, { reason: string; count: number }>) {
  report.reasons = [...reasonCounts.values()].sort((a, b) => b.count - a.count).slice(0, 20);
}

const itemOf = (job: ListedJob | Job | undefined) =>
  job
    ? { status: job.status, queue: job.queue, type: job.type, workerId: job.workerId, leaseRemainingMs: 'leaseRemainingMs' in job ? job.leaseRemainingMs : undefined }
    : {};

export async function previewAction(db: Executor, action: BulkAction, target: BulkTarget, o: BulkOptions, extra: RecoverExtras): Promise<BulkReport> {
  const resolved = await resolveTarget(db, target);
  if ('all' in resolved) return recoverAll(db, true, extra);
  const { ids, maxId, finishedBy } = resolved;
  const rows = await currentRows(db, ids);
  // Who would take each key, predicted from the rows as read now, oldest first as applyAction
  // orders them; the statement decides again.
  const holders = action === 'requeue' ? await singletonHolders(db, [...rows.values()]) : new Map<string, string>();
  const report: BulkReport = emptyReport(action, true, ids.length, maxId, finishedBy);
  const reasons = new Map<string, { reason: string; count: number }>();
  for (const id of ids) {
    const job = rows.get(id);
    if (!job) {
      report.skipped++;
      bump(report.byOutcome, 'not_found');
      if (report.items.length < PREVIEW_ITEMS) report.items.push({ id, ok: false, outcome: 'would_skip', reason: 'no such job' });
      continue;
    }
    bump(report.byStatus, job.status);
    const p = predict(action, { ...job, singletonHolder: holders.get(id) ?? null }, o);
    if (p.change) report.changed++;
    else {
      report.skipped++;
      const key = groupReason(p.reason);
      const r = reasons.get(key) ?? { reason: groupText(key, p.reason), count: 0 };
      r.count++;
      reasons.set(key, r);
    }
    bump(report.byOutcome, p.outcome);
    if (report.items.length < PREVIEW_ITEMS)
      report.items.push({ id, ok: p.change, outcome: p.change ? 'would_change' : 'would_skip', reason: p.reason, ...itemOf(job) });
  }
  report.itemsTruncated = ids.length > report.items.length;
  if (action !== 'recover' && ids.length <= SEEN_ITEMS) {
    report.seen = {};
    for (const id of ids) {
      const job = rows.get(id);
      if (job) report.seen[id] = { status: job.status, attempt: job.attemptCount };
    }
  }
  tally(report, reasons);
  return report;
}

// ------------------------------------------------------------------ apply

export interface RecoverExtras {
  doorbell?: Doorbell | null;
  signalGraceMs?: number;
  /** A worker counts as live within this of its last report (see RecoverParams). */
  aliveWithinMs?: number;
  /** Where results are kept: a deleted job's result, and a requeued one's last, are deleted there. */
  results?: ResultStore | null;
  /** The ids a recover preview listed: each one absent from the sweep's result is reported as skipped. */
  expectIds?: readonly string[];
}

export async function applyAction(
  pool: pg.Pool,
  readDb: Executor,
  action: BulkAction,
  target: ResolvedTarget,
  o: BulkOptions,
  extra: RecoverExtras,
): Promise<AppliedReport> {
  if ('all' in target) {
    if (action !== 'recover') throw new QueueError('invalid_request', '`all` is only for recover');
    return recoverAll(pool, false, extra, readDb);
  }
  const { maxId, finishedBy, seen } = target;
  const ids = action === 'requeue' ? requeueOrder(target.ids) : target.ids;
  const report = emptyReport(action, false, ids.length, maxId, finishedBy);
  const reasons = new Map<string, { reason: string; count: number }>();
  const skippedItems: BulkItem[] = [];
  const changedItems: BulkItem[] = [];
  for (let k = 0; k < ids.length; k += OP_BATCH) {
    const batch = ids.slice(k, k + OP_BATCH);
    const r = await runOp(pool, readDb, action, batch, o, extra, seen);
    for (const item of r.items) {
      bump(report.byOutcome, item.outcome);
      if (item.job) bump(report.byStatus, item.job.status);
      const entry: BulkItem = { id: item.id, ok: item.ok, outcome: item.outcome, reason: item.reason, ...itemOf(item.job) };
      if (item.ok) {
        report.changed++;
        if (changedItems.length < REPORT_ITEMS) changedItems.push(entry);
      } else {
        report.skipped++;
        const key = groupReason(item.reason ?? item.outcome);
        const g = reasons.get(key) ?? { reason: groupText(key, item.reason ?? item.outcome), count: 0 };
        g.count++;
        reasons.set(key, g);
        if (skippedItems.length < REPORT_ITEMS) skippedItems.push(entry);
      }
    }
  }
  // Skips first: they are what an operator has to read.
  report.items = [...skippedItems, ...changedItems].slice(0, REPORT_ITEMS);
  report.itemsTruncated = report.changed + report.skipped > report.items.length;
  tally(report, reasons);
  return report;
}

async function runOp(
  pool: pg.Pool,
  readDb: Executor,
  action: BulkAction,
  ids: string[],
  o: BulkOptions,
  extra: RecoverExtras,
  seen: SeenJobs | undefined,
): Promise<ActionReport> {
  switch (action) {
    case 'requeue':
      return jobRequeue(pool, { ids, resetAttempts: o.resetAttempts, revokeLease: o.revokeLease, doorbell: extra.doorbell, results: extra.results, seen });
    case 'cancel':
      return jobCancel(pool, { ids, seen });
    case 'delete':
      return jobDelete(pool, { ids, results: extra.results, seen });
    case 'recover': {
      const r = await jobRecover(pool, { ids, doorbell: extra.doorbell, signalGraceMs: extra.signalGraceMs, aliveWithinMs: extra.aliveWithinMs });
      return recoverItems(readDb, ids, r.expired);
    }
  }
}

/** A recover result as per-item outcomes: moved ids are recovered, the rest skipped with the reason from their current row. */
async function recoverItems(
  readDb: Executor,
  ids: readonly string[],
  moved: { id: string; status: JobStatus; workerId: string | null; expiredMs: number }[],
): Promise<ActionReport> {
  const byId = new Map(moved.map((m) => [m.id, m]));
  const rest = await currentRows(
    readDb,
    ids.filter((id) => !byId.has(id)),
  );
  const now = await currentRows(readDb, [...byId.keys()]);
  const items = ids.map((id) => {
    const m = byId.get(id);
    if (m) {
      return {
        id,
        ok: true,
        outcome: 'recovered' as const,
        reason: `lease of ${m.workerId ?? 'unknown worker'} had expired ${Math.round(m.expiredMs / 1000)} s before → ${m.status}`,
        job: now.get(id),
      };
    }
    const cur = rest.get(id);
    if (!cur) return { id, ok: false, outcome: 'not_found' as const, reason: 'no such job' };
    return { id, ok: false, outcome: 'skipped' as const, reason: describeRefusal('recover', cur), job: cur };
  });
  const changed = items.filter((i) => i.ok).length;
  return { items, changed, skipped: items.length - changed };
}

/** The whole recover sweep (expired leases and missing wake-up signals), previewed or applied. */
async function recoverAll(db: Executor, preview: boolean, extra: RecoverExtras, readDb: Executor = db): Promise<AppliedReport> {
  const limit = preview ? RECOVER_PREVIEW_LIMIT : RECOVER_RUN_ROWS;
  const r = await jobRecover(db, { dryRun: preview, maxRows: limit, doorbell: extra.doorbell, signalGraceMs: extra.signalGraceMs, aliveWithinMs: extra.aliveWithinMs });
  const report: AppliedReport = emptyReport('recover', preview, r.expired.length, null, null);
  report.recoverLimit = RECOVER_RUN_ROWS;
  if (!preview) report.movedIds = r.expired.map((e) => e.id);
  report.moreMayChange = r.moreMayChange;
  const reasons = new Map<string, { reason: string; count: number }>();
  for (const e of r.expired) {
    report.changed++;
    bump(report.byOutcome, 'recovered');
    // As they stood (a preview: running, lease expired) or after the action, as elsewhere.
    bump(report.byStatus, preview ? 'running' : e.status);
    if (report.items.length < REPORT_ITEMS)
      report.items.push({
        id: e.id,
        ok: true,
        outcome: preview ? 'would_change' : 'recovered',
        reason: `lease of ${e.workerId ?? 'unknown worker'} expired ${Math.round(e.expiredMs / 1000)} s ago → ${e.status}`,
        status: preview ? 'running' : e.status,
        queue: e.queue,
        type: e.type,
        workerId: e.workerId,
      });
  }
  if (!preview && extra.expectIds?.length) {
    const moved = new Set(r.expired.map((e) => e.id));
    const missing = extra.expectIds.filter((id) => !moved.has(id));
    const rows = await currentRows(readDb, missing);
    for (const id of missing) {
      const cur = rows.get(id);
      const reason = cur ? describeRefusal('recover', cur) : 'no such job';
      report.total++;
      report.skipped++;
      bump(report.byOutcome, cur ? 'skipped' : 'not_found');
      const key = groupReason(reason);
      const g = reasons.get(key) ?? { reason, count: 0 };
      g.count++;
      reasons.set(key, g);
      report.items.unshift({ id, ok: false, outcome: cur ? 'skipped' : 'not_found', reason, ...itemOf(cur) });
    }
  }
  report.items = report.items.slice(0, REPORT_ITEMS);
  report.itemsTruncated = report.changed + report.skipped > report.items.length;
  report.resignal = r.resignalled.slice(0, PREVIEW_ITEMS);
  report.resignalTotal = r.resignalled.length;
  report.resignalQueues = r.queues;
  tally(report, reasons);
  return report;
}

function emptyReport(action: BulkAction, preview: boolean, total: number, maxId: string | null, finishedBy: string | null): BulkReport {
  return { action, preview, total, changed: 0, skipped: 0, byStatus: {}, byOutcome: {}, reasons: [], items: [], itemsTruncated: false, maxId, finishedBy };
}

function bump<K extends string>(m: Partial<Record<K, number>>, k: K) {
  m[k] = (m[k] ?? 0) + 1;
}
