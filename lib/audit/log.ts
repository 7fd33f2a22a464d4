/**
 * The audit log: one row per operator action, written by the same function for the API
 * (and so the console, which calls it) and the CLI. Reads for the /audit page and for each
 * job's timeline live here too. Producers' enqueues and the worker's own transitions are
 * not operator actions and are not logged here.
 */
import type { Executor } from '../db/client';
import { log } from '../log';
import type { Principal } from '../auth/roles';
import type { ActionReport } from '../queue/ops';

export type ActorKind = 'user' | 'token' | 'cli' | 'system' | 'anonymous';

export interface AuditInput {
  actor: string;
  actorKind: ActorKind;
  action: string;
  /** What it applied to: `{ids}`, `{filter, maxId}`, `{queue}`, `{user}`, `{token}`… */
  target: Record<string, unknown>;
  /** The jobs it touched (changed or skipped): puts the entry on their timelines. */
  jobIds?: readonly string[];
  changed: number;
  skipped: number;
  reason?: string | null;
  details?: Record<string, unknown>;
}

export interface AuditEntry extends Omit<AuditInput, 'jobIds'> {
  id: string;
  at: Date;
  jobIds: string[];
  reason: string | null;
  details: Record<string, unknown>;
}

/** Most job ids kept on one entry (a bulk action over more keeps its filter and the first ones). */
export const AUDIT_MAX_JOB_IDS = 10_000;

export const actorOf = (who: Principal): { actor: string; actorKind: ActorKind } => ({
  actor: who.name,
  actorKind: who.kind === 'user' ? 'user' : who.kind === 'token' ? 'token' : 'anonymous',
});

/**
 * The entry of an action on jobs named by id (the API's one-job requeue and cancel, the
 * CLI's `requeue|cancel ID…`): the ids, the counts, and for one job how it ended and why.
 */
export function jobActionEntry(
  action: string,
  ids: readonly string[],
  report: ActionReport,
  reason?: string | null,
  details: Record<string, unknown> = {},
): Omit<AuditInput, 'actor' | 'actorKind'> {
  const one = ids.length === 1 ? report.items[0] : undefined;
  return {
    action,
    target: { ids },
    jobIds: ids,
    changed: report.changed,
    skipped: report.skipped,
    reason,
    details: one ? { ...details, outcome: one.outcome, why: one.reason } : details,
  };
}

export async function auditRecord(db: Executor, e: AuditInput): Promise<string> {
  const ids = (e.jobIds ?? []).slice(0, AUDIT_MAX_JOB_IDS);
  const details = { ...(e.details ?? {}), ...((e.jobIds?.length ?? 0) > ids.length ? { jobIdsTruncated: e.jobIds!.length } : {}) };
  try {
    const { rows } = await db.query(
      `INSERT INTO audit_log (actor, actor_kind, action, target, job_ids, changed, skipped, reason, details)
       VALUES ($1, $2, $3, $4, $5::bigint[], $6, $7, $8, $9) RETURNING audit_id`,
      [e.actor, e.actorKind, e.action, JSON.stringify(e.target), ids, e.changed, e.skipped, e.reason?.trim() || null, JSON.stringify(details)],
    );
    return String(rows[0].audit_id);
  } catch (err) {
    // The action itself has happened: say loudly that its record is missing.
    log.error('could not write the audit log entry of an operator action', { err, action: e.action, actor: e.actor });
    throw err;
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
            changed, skipped, reason, details
       FROM audit_log
      WHERE ($1::text IS NULL OR actor = $1)
        AND ($2::text IS NULL OR action = $2)
        AND ($3::bigint IS NULL OR job_ids @> ARRAY[$3::bigint])
        AND ($4::bigint IS NULL OR audit_id < $4)
      ORDER BY audit_id DESC
      LIMIT $5`,
    [q.actor ?? null, q.action ?? null, q.jobId ?? null, q.cursor ?? null, q.limit + 1],
  );
  const more = rows.length > q.limit;
  const entries = rows.slice(0, q.limit).map((r) => ({ ...toEntry(r), details: { ...r.details, jobCount: r.job_count } }));
  return { entries, nextCursor: more ? entries[entries.length - 1]!.id : null };
}
