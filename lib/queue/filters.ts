/**
 * The console's job filters as SQL: one place that turns {status, queue, type, id, worker,
 * error text, payload key, error fingerprint} into a WHERE clause, shared by the list,
 * the "N new" count and the bulk actions that resolve "all N matching this filter".
 *
 * Which filters an index serves decides how a query may scan (see read.ts): status (with
 * job_id) has jobs_status_idx and an id is the primary key; a running job's worker has
 * jobs_running_idx. Everything else (queue, type, a finished job's worker, error text,
 * payload, fingerprint) is a filter on rows read in job_id order, so those queries scan a
 * bounded window of ids at a time instead of the whole table.
 */
import { parseSince } from '../since';
import { isJobIdText } from './job';
import type { JobStatus } from './status';

export interface JobFilter {
  status?: JobStatus;
  queue?: string;
  type?: string;
  /** One job id. */
  id?: string;
  /**
   * A worker process: the jobs it runs or ran last, and those whose lease it lost (the jobs in
   * hand when it died, since taken over by others). With status running, only those it runs.
   */
  worker?: string;
  /** Text searched (case-insensitive substring) in the last error. */
  error?: string;
  /** `path` (the key exists) or `path=value` (JSON containment); path is dot-separated. */
  payload?: string;
  /** An error fingerprint (see fingerprint.ts). */
  fingerprint?: string;
  /** Jobs claimed at least this many times (a decimal, 1-100): "which jobs needed more than one try". */
  minAttempts?: string;
  /** Jobs of this priority (a decimal digit, 0-9). */
  priority?: string;
  /** Waiting jobs by when they are due: `now` (run_at passed) or `later` (scheduled, or a retry in its backoff). */
  due?: 'now' | 'later';
  /** Enqueued since: a span back from now (`1h`) or a moment (ISO 8601); see lib/since.ts. */
  createdSince?: string;
  /** Finished (completed, failed or cancelled) since: as createdSince. */
  finishedSince?: string;
  /** Legacy free search: a job id, or text in the last error. */
  q?: string;
  /** Only jobs with an id at most this (pins "all matching" to what a preview saw). */
  maxId?: string;
  /**
   * Only jobs not finished after this moment (microseconds since 1970, the database clock):
   * with maxId, pins "all matching" to what a preview saw — a job older than maxId that
   * fails after the preview would otherwise join a "requeue (or delete) this group" that
   * never showed it.
   */
  finishedBy?: string;
}

/** A timestamp as microseconds since 1970 (bigint): how moments travel in cursors and pins. */
export const MICROS = (column: string) => `(extract(epoch FROM ${column}) * 1000000)::bigint`;
/** Microseconds since 1970 (a bound parameter) back as a timestamptz. */
export const fromMicros = (param: string) => `('epoch'::timestamptz + ${param}::bigint * interval '1 microsecond')`;

/** The filter keys that only pin a set a preview saw: not conditions of their own. */
export const PIN_KEYS: readonly string[] = ['maxId', 'finishedBy'];

/**
 * A place in the failed list, which is ordered by when jobs failed (finished_at, then
 * job_id, newest first), or in the running list, ordered by when they started (started_at):
 * "<microseconds since 1970>.<job_id>". Their cursors take this form, and their "N new"
 * anchors (MOMENT_ANCHOR) one like it; every other list is ordered by id.
 */
export const FAILED_POSITION = /^(\d{1,17})\.(\d{1,19})$/;

/**
 * The "N new" anchor of a list whose jobs arrive whatever their ids — the failed list (jobs
 * that failed since) and the running list (jobs that started since): a moment, and how many
 * of the list's jobs after it the page's read already saw ("<microseconds>.<job id>.<seen>";
 * without ".<seen>", none).
 */
export const MOMENT_ANCHOR = /^(\d{1,17})\.(\d{1,19})(?:\.(\d{1,9}))?$/;
/** The lists whose "N new" counts from a MOMENT_ANCHOR, and the time each job arrived in it. */
export const MOMENT_LISTS = { failed: 'finished_at', running: 'started_at' } as const;
/** The most seen jobs an anchor carries (past it, the list anchors at its read, seen 0). */
export const ANCHOR_SEEN_MAX = 10_000;

export const FILTER_KEYS = ['status', 'queue', 'type', 'id', 'worker', 'error', 'payload', 'fingerprint', 'minAttempts', 'priority', 'due', 'createdSince', 'finishedSince', 'q', 'maxId', 'finishedBy'] as const;

export const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => '\\' + c);

export class SqlParams {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/** A payload filter, parsed: the key path and, for `path=value`, the value. */
export interface PayloadFilter {
  path: string[];
  value?: unknown;
}

/** Parses `a.b=value` / `a.b`; the value is JSON when it parses as a JSON scalar, else a string. */
export function parsePayloadFilter(raw: string): PayloadFilter | null {
  const eq = raw.indexOf('=');
  const pathText = (eq >= 0 ? raw.slice(0, eq) : raw).trim();
  if (!/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+){0,7}$/.test(pathText)) return null;
  const path = pathText.split('.');
  if (eq < 0) return { path };
  const text = raw.slice(eq + 1).trim();
  let value: unknown = text;
  try {
    const parsed = JSON.parse(text);
    if (parsed === null || ['number', 'boolean', 'string'].includes(typeof parsed)) value = parsed;
  } catch {
    // a bare word: compare as a string
  }
  return { path, value };
}

/** {a: {b: value}} for path [a, b]. */
function nest(path: string[], value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

/**
 * The WHERE conditions of a filter (without keyset bounds). `scans` is true when some
 * condition is not served by an index in job_id order, so the caller must bound the
 * rows it reads by an id window.
 */
export function filterSql(f: JobFilter, p: SqlParams, fingerprintSql: string): { conds: string[]; scans: boolean } {
  const conds: string[] = [];
  let scans = false;
  if (f.status) conds.push(`status = ${p.add(f.status)}::job_status`);
  if (f.id) conds.push(`job_id = ${p.add(f.id)}::bigint`);
  if (f.maxId) conds.push(`job_id <= ${p.add(f.maxId)}::bigint`);
  if (f.finishedBy) conds.push(`(finished_at IS NULL OR finished_at <= ${fromMicros(p.add(f.finishedBy))})`);
  if (f.queue) {
    conds.push(`queue = ${p.add(f.queue)}`);
    scans = true;
  }
  if (f.type) {
    conds.push(`type = ${p.add(f.type)}`);
    scans = true;
  }
  if (f.worker) {
    const w = p.add(f.worker);
    if (f.status === 'running') conds.push(`worker_id = ${w}`);
    else {
      // A job it held when it died has moved on (taken over: its row names the new worker);
      // its lost attempt still names this one (ended_attempts_lost_idx).
      conds.push(`(worker_id = ${w} OR job_id IN (SELECT job_id FROM ended_attempts WHERE worker_id = ${w} AND outcome = 'lease_lost'))`);
      scans = true;
    }
  }
  if (f.minAttempts) {
    conds.push(`attempt_count >= ${p.add(f.minAttempts)}::int`);
    scans = true;
  }
  if (f.priority) {
    conds.push(`priority = ${p.add(f.priority)}::smallint`);
    scans = true;
  }
  if (f.due) {
    // Only waiting jobs have a due time that matters: a finished job's run_at is history.
    // Due as of the preview's moment when an action pins one (finishedBy), so a job coming
    // due between the preview and the run is not taken in (nor one dropped) unseen.
    const clock = f.finishedBy ? fromMicros(p.add(f.finishedBy)) : 'now()';
    conds.push(`status IN ('queued', 'retrying') AND run_at ${f.due === 'later' ? '>' : '<='} ${clock}`);
    scans = true;
  }
  for (const key of ['createdSince', 'finishedSince'] as const) {
    const cond = sinceSql(f, key, p);
    if (!cond) continue;
    conds.push(cond);
    scans = true;
  }
  if (f.error) {
    conds.push(`error ILIKE ${p.add(`%${escapeLike(f.error)}%`)}`);
    scans = true;
  }
  if (f.q) {
    if (isJobIdText(f.q)) conds.push(`job_id = ${p.add(f.q)}::bigint`);
    else {
      conds.push(`error ILIKE ${p.add(`%${escapeLike(f.q)}%`)}`);
      scans = true;
    }
  }
  if (f.payload) {
    const pf = parsePayloadFilter(f.payload);
    if (pf) {
      if ('value' in pf) conds.push(`payload @> ${p.add(JSON.stringify(nest(pf.path, pf.value)))}::jsonb`);
      else conds.push(`payload #> ${p.add(pf.path)}::text[] IS NOT NULL`);
      scans = true;
    }
  }
  if (f.fingerprint) {
    conds.push(`${fingerprintSql} = ${p.add(f.fingerprint)}`);
    scans = true;
  }
  // An id pins the row: no scan whatever else is set.
  if (f.id || (f.q && isJobIdText(f.q))) scans = false;
  return { conds, scans };
}

/**
 * A time filter's condition (`created_at >= …`, `finished_at >= …`), or null without one.
 * Also the failed list's bound on its windows (read.ts): that list is in finished_at order,
 * so the windows stop where the failures get older than finishedSince.
 */
export function sinceSql(f: JobFilter, key: 'createdSince' | 'finishedSince', p: SqlParams): string | null {
  const moment = sinceMomentSql(f, key, p);
  return moment && `${key === 'createdSince' ? 'created_at' : 'finished_at'} >= ${moment}`;
}

/** Where a time filter's window opens, as a timestamptz expression, or null without one. */
export function sinceMomentSql(f: JobFilter, key: 'createdSince' | 'finishedSince', p: SqlParams): string | null {
  const since = f[key] ? parseSince(f[key]!) : null;
  if (!since) return null;
  if (!since.span) return `${p.add(since.at)}::timestamptz`;
  // A span is reckoned on the database clock — as of the preview's moment when an action
  // pins one (finishedBy), so the window an operator saw is the one acted on. (Only a span
  // takes the pin as a parameter: one the statement never used would have no type, and
  // PostgreSQL refuses such a statement.)
  const clock = f.finishedBy ? fromMicros(p.add(f.finishedBy)) : 'now()';
  return `(${clock} - ${p.add(since.ms / 1000)}::float8 * interval '1 second')`;
}

/** The filter with empty values dropped (for URLs, keys and logs). */
export function compactFilter(f: JobFilter): JobFilter {
  const out: JobFilter = {};
  for (const k of FILTER_KEYS) {
    const v = f[k];
    if (v !== undefined && v !== '') (out as Record<string, string>)[k] = v;
  }
  return out;
}
