/**
 * The audit log: one row per operator action, written by the same function for the API
 * (and so the console, which calls it) and the CLI. Reads for the /audit page and for each
 * job's timeline live here too. Producers' enqueues and the worker's own transitions are
 * not operator actions and are not logged here.
 */
import os from 'node:os';
import type { Executor } from '../db/client';
import { log } from '../log';
import type { Principal } from '../auth/roles';
import { escapeLike } from '../queue/filters';
import { knownQueueError, QueueError } from '../queue/errors';
import { type ActionReport, type ScheduleInput, workerQuietOne } from '../queue/ops';
import type { AuditAction } from './actions';

export type ActorKind = 'user' | 'token' | 'cli' | 'client' | 'system' | 'anonymous';

/**
 * The process's user on its host (`deploy@app-3`), or LEASEHOLD_ACTOR: who acted, for the
 * CLI and the library's client (which trust whoever holds the database URL).
 */
export function processActor(): string {
  let user = process.env.LEASEHOLD_ACTOR?.trim();
  if (!user) {
    try {
      user = os.userInfo().username;
    } catch {
      user = process.env.USER ?? 'unknown';
    }
  }
  return `${user}@${os.hostname()}`.slice(0, 200);
}

export interface AuditInput {
  actor: string;
  actorKind: ActorKind;
  /** One of the known actions (lib/audit/actions.ts): the /audit page's filter lists them. */
  action: AuditAction;
  /** What it applied to: `{ids}`, `{filter, maxId}`, `{queue}`, `{user}`, `{token}`… */
  target: Record<string, unknown>;
  /** The jobs it touched (changed or skipped): puts the entry on their timelines. */
  jobIds?: readonly string[];
  changed: number;
  skipped: number;
  reason?: string | null;
  details?: Record<string, unknown>;
}

export interface AuditEntry extends Omit<AuditInput, 'jobIds' | 'action'> {
  id: string;
  /** As stored: a name another version of Leasehold wrote may not be one this one knows. */
  action: string;
  at: Date;
  jobIds: string[];
  reason: string | null;
  details: Record<string, unknown>;
  /** 'started': the action's outcome was never written (its process died, or the database went away). */
  state: 'started' | 'done' | 'failed';
}

/** Most job ids kept on one entry (a bulk action over more keeps its filter and the first ones). */
export const AUDIT_MAX_JOB_IDS = 10_000;

export const actorOf = (who: Principal): { actor: string; actorKind: ActorKind } => ({
  actor: who.name,
  actorKind: who.kind === 'user' ? 'user' : who.kind === 'token' ? 'token' : 'anonymous',
});

const BULK_OF: Partial<Record<AuditAction, AuditAction>> = { requeue: 'bulk.requeue', cancel: 'bulk.cancel', delete: 'bulk.delete', recover: 'bulk.recover' };

/**
 * The entry of an action on jobs named by id (the API's one-job requeue and cancel, the
 * CLI's `requeue|cancel ID…`), for `audited`: the ids and the reason up front, then the
 * counts and, for one job, how it ended and why. Several jobs are the bulk action, as
 * POST /api/actions records them ("requeue one job", "requeue several jobs": AUDIT_ACTIONS),
 * so the log's Action filter finds an action whichever way it came.
 */
export function jobActionEntry(
  action: AuditAction,
  ids: readonly string[],
  reason?: string | null,
  details: Record<string, unknown> = {},
): { entry: AuditStart; outcome: (report: ActionReport) => AuditOutcome } {
  return {
    entry: { action: (ids.length > 1 && BULK_OF[action]) || action, target: { ids }, jobIds: ids, reason, details },
    outcome: (report) => {
      const one = ids.length === 1 ? report.items[0] : undefined;
      return { changed: report.changed, skipped: report.skipped, details: one ? { outcome: one.outcome, why: one.reason } : {} };
    },
  };
}

/**
 * A reschedule's entry (the API's, the CLI's, the client's): its due time as stored — a time
 * already past is stored as now — not as asked; null when only the priority changed.
 */
export function rescheduleEntry(ids: readonly string[], reason: string | null | undefined, runAt: Date | undefined, priority: number | undefined) {
  const { entry, outcome } = jobActionEntry('reschedule', ids, reason, { runAt: runAt?.toISOString() ?? null, priority: priority ?? null });
  return {
    entry,
    outcome: (report: ActionReport): AuditOutcome => {
      const o = outcome(report);
      const job = runAt === undefined ? undefined : report.items.find((i) => i.ok)?.job;
      return job ? { ...o, details: { ...o.details, runAt: job.runAt.toISOString() } } : o;
    },
  };
}

/** What is known of an action before it runs (who, what, on which jobs, why). */
export type AuditStart = Omit<AuditInput, 'changed' | 'skipped' | 'actor' | 'actorKind'>;
/** What the action reported: the counts, and anything learnt while it ran (merged in). */
export type AuditOutcome = Partial<Pick<AuditInput, 'jobIds' | 'target' | 'details'>> & Pick<AuditInput, 'changed' | 'skipped'>;

const boundedIds = (ids: readonly string[] | undefined) => {
  const kept = (ids ?? []).slice(0, AUDIT_MAX_JOB_IDS);
  return { kept, truncated: (ids?.length ?? 0) > kept.length ? { jobIdsTruncated: ids!.length } : {} };
};

/**
 * Runs an operator action inside its audit entry. The entry is written first, as
 * 'started' — if it cannot be written, the action does not run — and then completed with
 * what the action reported ('done', with the counts) or with its error ('failed'). A
 * process that dies in between leaves the 'started' entry, so an action can never be
 * missing from the log; the /audit page shows such an entry as "outcome unknown".
 */
export async function audited<R>(
  db: Executor,
  who: Pick<AuditInput, 'actor' | 'actorKind'>,
  start: AuditStart,
  run: () => Promise<R>,
  outcome: (result: R) => AuditOutcome,
): Promise<R> {
  const id = await insertEntry(db, { ...who, ...start, changed: 0, skipped: 0 }, 'started');
  let result: R;
  try {
    result = await run();
  } catch (err) {
    if (err instanceof QueueError && err.httpStatus < 500) {
      // Refused before it changed anything (a filter matching too much, a name taken…):
      // a refused request leaves no entry, as one refused by the gate does not.
      await db.query(`DELETE FROM audit_log WHERE audit_id = $1 AND state = 'started'`, [id]).catch((e) =>
        log.error('could not remove the audit entry of a refused action', { err: e, audit: id }),
      );
    } else {
      // What changed before the error (a bulk action commits batch by batch) is not
      // counted: the entry says so rather than claiming nothing changed.
      // Viewers read the log: an internal error (SQL, addresses) is not kept; the caller
      // that reports it (the HTTP route, the CLI) logs or prints it, once.
      const error = knownQueueError(err)?.message.slice(0, 500) ?? 'internal error (logged on the server)';
      await finish(db, id, 'failed', { changed: 0, skipped: 0, details: { error, countsUnknown: true } });
    }
    throw err;
  }
  await finish(db, id, 'done', () => outcome(result));
  return result;
}

/**
 * An entry written after its action, for the one action whose actor exists only once it has
 * succeeded: the first admin's setup (a failed setup is an anonymous attempt, counted by the
 * sign-in limiter, not an operator's action). Every other action goes through `audited`.
 */
export function auditRecord(db: Executor, e: AuditInput): Promise<string> {
  return insertEntry(db, e, 'done');
}

async function insertEntry(db: Executor, e: AuditInput, state: 'started' | 'done'): Promise<string> {
  const ids = boundedIds(e.jobIds);
  const { rows } = await db.query(
    `INSERT INTO audit_log (actor, actor_kind, action, target, job_ids, changed, skipped, reason, details, state)
     VALUES ($1, $2, $3, $4, $5::bigint[], $6, $7, $8, $9, $10) RETURNING audit_id`,
    [e.actor, e.actorKind, e.action, JSON.stringify(e.target), ids.kept, e.changed, e.skipped, e.reason?.trim() || null, JSON.stringify({ ...e.details, ...ids.truncated }), state],
  );
  return String(rows[0].audit_id);
}

/** Completes an entry; the outcome is built in here too, so no failure of either can turn an action that ran into a 500. */
async function finish(db: Executor, id: string, state: 'done' | 'failed', outcome: AuditOutcome | (() => AuditOutcome)) {
  try {
    const o = typeof outcome === 'function' ? outcome() : outcome;
    const ids = o.jobIds ? boundedIds(o.jobIds) : null;
    await db.query(
      `UPDATE audit_log SET state = $2, changed = $3, skipped = $4, job_ids = coalesce($5::bigint[], job_ids),
              target = coalesce($6::jsonb, target), details = details || $7::jsonb
        WHERE audit_id = $1`,
      [id, state, o.changed, o.skipped, ids?.kept ?? null, o.target ? JSON.stringify(o.target) : null, JSON.stringify({ ...o.details, ...ids?.truncated })],
    );
  } catch (err) {
    // The action has run; its entry stays 'started' (outcome unknown). Say so loudly.
    log.error('could not complete the audit log entry of an operator action', { err, audit: id, state });
  }
}

const toEntry = (r: any): AuditEntry => ({
  id: String(r.audit_id),
  at: r.at,
  actor: r.actor,
  actorKind: r.actor_kind,
  action: r.action,
  target: r.target,
  jobIds: (r.job_ids ?? []).map(String),
  changed: r.changed,
  skipped: r.skipped,
  reason: r.reason,
  details: r.details,
  state: r.state,
});

export interface AuditQuery {
  actor?: string;
  action?: string;
  jobId?: string;
  /** Entries with a smaller id (the previous page's nextCursor). */
  cursor?: string;
  limit: number;
}

/** Newest first, keyset pages. Job ids are listed only up to 50 per entry (the count is kept). */
export async function auditList(db: Executor, q: AuditQuery): Promise<{ entries: AuditEntry[]; nextCursor: string | null }> {
  const { rows } = await db.query(
    `SELECT audit_id, at, actor, actor_kind, action, target, job_ids[1:50] AS job_ids, cardinality(job_ids) AS job_count,
            changed, skipped, reason, details, state
       FROM audit_log
      WHERE ($1::text IS NULL OR lower(actor) LIKE lower($1))
        AND ($2::text IS NULL OR action = $2)
        AND ($3::bigint IS NULL OR job_ids @> ARRAY[$3::bigint])
        AND ($4::bigint IS NULL OR audit_id < $4)
      ORDER BY audit_id DESC
      LIMIT $5`,
    // Who: the start of a name, in any case ("root" finds "root@vm", "erin" finds "Erin").
    [q.actor ? `${escapeLike(q.actor)}%` : null, q.action ?? null, q.jobId ?? null, q.cursor ?? null, q.limit + 1],
  );
  const more = rows.length > q.limit;
  // The count of jobs it touched: every one, also past the AUDIT_MAX_JOB_IDS kept (jobIdsKept says how many are).
  const entries = rows.slice(0, q.limit).map((r) => {
    const all = Number(r.details?.jobIdsTruncated);
    const kept = Number(r.job_count);
    return { ...toEntry(r), details: { ...r.details, jobCount: all > kept ? all : kept, ...(all > kept ? { jobIdsKept: kept } : {}) } };
  });
  return { entries, nextCursor: more ? entries[entries.length - 1]!.id : null };
}

/**
 * Quiet or resume one worker process inside its audit entry: the API's and the console's
 * (lib/http/worker-actions.ts) and a worker's own on its supervisor's SIGTSTP
 * (worker/process.ts). The ops function's answer: whether it changed, and the request's token.
 */
export async function auditedWorkerQuiet(
  db: Executor,
  who: Pick<AuditInput, 'actor' | 'actorKind'>,
  p: { workerId: string; quiet: boolean; reason?: string | null },
) {
  return audited(
    db,
    who,
    { action: p.quiet ? 'worker.quiet' : 'worker.resume', target: { worker: p.workerId }, reason: p.reason ?? null },
    () => workerQuietOne(db, { workerId: p.workerId, quiet: p.quiet, by: who.actor }),
    (r) => ({ changed: r.changed ? 1 : 0, skipped: r.changed ? 0 : 1 }),
  );
}

/** What a schedule definition's audit entry says it set (the API's PUT and the CLI's `schedule add`); not its payload. */
export const scheduleDefinedDetails = (s: ScheduleInput) => ({
  cron: s.cron,
  timezone: s.timezone ?? 'UTC',
  type: s.type,
  queue: s.queue,
  priority: s.priority,
  overlap: s.overlap ?? null,
});

/**
 * A schedule definition's audit outcome (the API's PUT and the CLI's `schedule add`): new or
 * redefined, and for a redefinition the old values of what it changed.
 */
export const scheduleDefinedOutcome = ({ created, changedFrom, payloadChanged }: { created: boolean; changedFrom: Record<string, unknown>; payloadChanged: boolean }): AuditOutcome => ({
  changed: 1,
  skipped: 0,
  details: { created, ...(Object.keys(changedFrom).length ? { changedFrom } : {}), ...(payloadChanged ? { payloadChanged } : {}) },
});
