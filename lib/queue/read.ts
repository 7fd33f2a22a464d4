/**
 * Read models for the console, the API and the CLI. Nothing here decides about state:
 * actions go through ops, which re-checks everything in its own statements.
 * Reads are keyset-paginated (never OFFSET) and served by the indexes in schema.ts.
 */
import type { CountKind, DatabaseHealth } from './console-stats';
import { type Executor, onOneSnapshot } from '../db/client';
import { ANCHOR_SEEN_MAX, FAILED_POSITION, MOMENT_ANCHOR, MOMENT_LISTS, filterSql, fromMicros, type JobFilter, MICROS, SqlParams, sinceMomentSql, sinceSql } from './filters';
import { QueueError } from './errors';
import { fingerprintSql } from './fingerprint';
import { type Job, MAX_JOB_ID, OWNER_GONE_SQL, quietTokenSql, SCHEDULES_FAILING_SQL, SCHEDULES_SKIPPING_SQL, type Seen, singletonHolderSql, SUSPECT_STREAK, toJob } from './job';
import type { AttemptOutcome, JobStatus } from './status';
import { JOB_STATUSES } from './status';
import type { JobsAhead } from './ops';

export interface ListFilters extends JobFilter {
  /** Keyset cursor: list jobs with a smaller id than this. */
  cursor?: string;
  limit: number;
}

export type ListedJob = Job & {
  leaseRemainingMs: number | null;
  /** Its run_at is past the database's clock at the read (a requeue's "not yet due" is told by it, not the server's clock). */
  notYetDue: boolean;
  /** A running job whose worker its supervisor saw die: how it ended. Null otherwise. */
  ownerGone: string | null;
  /** Stored size of the payload; the payload itself is left out of lists above LIST_PAYLOAD_MAX_BYTES. */
  payloadBytes: number;
};

export interface JobPage {
  jobs: ListedJob[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
  /** The database clock when the page was read (the console corrects countdowns with it). */
  dbNow: Date;
  /** The newest job id when the page was read. */
  headId: string | null;
  /**
   * What the console counts "N new" above (GET /api/jobs/newer?after=): the newest id for
   * lists in id order; for the failed list, the moment of the read (a FAILED_POSITION), so a
   * job enqueued long ago that fails now is counted.
   */
  newerAfter: string | null;
  /**
   * Set when a filter that no index serves stopped at its scan budget before the page
   * was full: ids from `scannedDownTo` up were searched; `nextCursor` continues below.
   */
  partial: { scannedDownTo: string; scannedIds: number } | null;
}

/** Ids one windowed query covers, and how long one list request may keep scanning. */
export const SCAN_WINDOW = 100_000n;
export const SCAN_BUDGET_MS = 1_500;
/** Lists carry payloads up to this size; the detail has every payload. */
export const LIST_PAYLOAD_MAX_BYTES = 2_048;
/** Lists carry the first characters of the last error; the detail has all of it. */
export const LIST_ERROR_MAX_CHARS = 500;

const LIST_COLUMNS = `job_id, queue, type, status,
  CASE WHEN pg_column_size(payload) <= ${LIST_PAYLOAD_MAX_BYTES} THEN payload END AS payload,
  pg_column_size(payload) AS payload_bytes, attempt_count, max_attempts, attempt_budget, worker_id,
  heartbeat_at, lease_expires_at, run_at, priority, cancel_requested_at, idempotency_key, singleton_key, result_key,
  left(error, ${LIST_ERROR_MAX_CHARS}) AS error, created_at, started_at, finished_at, lease_lost_streak,
  CASE WHEN pg_column_size(checkpoints) <= ${LIST_PAYLOAD_MAX_BYTES} THEN checkpoints END AS checkpoints,
  extract(epoch FROM lease_expires_at - now()) * 1000 AS lease_remaining_ms, run_at > now() AS not_yet_due, ${OWNER_GONE_SQL}`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const toListed = (r: any): ListedJob => ({
  ...toJob(r),
  leaseRemainingMs: r.lease_remaining_ms === null ? null : Number(r.lease_remaining_ms),
  notYetDue: r.not_yet_due === true,
  ownerGone: r.owner_gone ?? null,
  payloadBytes: Number(r.payload_bytes),
});

/** The oldest and newest job ids and the database clock, in one round trip (both ends of the primary key). */
export async function idRange(db: Executor): Promise<{ min: bigint | null; max: bigint | null; now: Date }> {
  const { rows } = await db.query(
    `SELECT (SELECT job_id FROM jobs ORDER BY job_id LIMIT 1) AS min,
            (SELECT job_id FROM jobs ORDER BY job_id DESC LIMIT 1) AS max, now() AS now`,
  );
  const r = rows[0];
  return { min: r.min === null ? null : BigInt(r.min), max: r.max === null ? null : BigInt(r.max), now: r.now };
}

/**
 * A page of jobs, newest first, keyset-paginated by job_id (never OFFSET). Filters an
 * index serves run as one index scan; the others read a window of SCAN_WINDOW ids at a
 * time, window after window, until the page is full, the table is exhausted (or, with a
 * time filter, the ids below which none can match: createdFloor, finishedFloor) or the scan
 * budget is spent (then the page says how far it searched and the cursor continues there).
 */
export async function listJobs(db: Executor, f: ListFilters): Promise<JobPage> {
  if (f.status === 'failed') return listFailed(db, f);
  // A plain id as the cursor (a page of an earlier version's) goes on in id order.
  if (f.status === 'running' && !(f.cursor && !FAILED_POSITION.test(f.cursor))) return onOneSnapshot(db, (s) => readRunning(s, f));
  return listInIdOrder(db, f);
}

/**
 * The running list, the latest started first, keyset-paginated on (started_at, job_id) (a
 * cursor is "<started_at in microseconds>.<job id>", as the failed list's): a backlog's job, a
 * retry or a scheduled one starts with an old id, and shows at the top, where its "N new"
 * (runningAnchor: the jobs started since the read) sends the operator. The running rows are
 * few (jobs_running_idx holds them alone): read and sorted whole.
 */
async function readRunning(db: Executor, f: ListFilters): Promise<JobPage> {
  // First: its moment is the snapshot's (runningAnchor).
  const { rows: [meta] } = await db.query(
    `SELECT ${MICROS('statement_timestamp()')} AS now_us, (SELECT job_id FROM jobs ORDER BY job_id DESC LIMIT 1) AS head_id, now() AS db_now`,
  );
  const p = new SqlParams();
  const { conds } = filterSql(f, p, fingerprintSql());
  if (f.cursor) conds.push(`(started_at, job_id) < ${positionSql(p, f.cursor)}`);
  const { rows } = await db.query(
    `SELECT ${LIST_COLUMNS}, ${MICROS('started_at')} AS started_us FROM jobs WHERE ${conds.join(' AND ')}
      ORDER BY started_at DESC, job_id DESC LIMIT ${p.add(f.limit + 1)}`,
    p.values,
  );
  const page = rows.slice(0, f.limit);
  const last = page[page.length - 1];
  return {
    jobs: page.map(toListed),
    nextCursor: rows.length > f.limit && last ? `${last.started_us}.${last.job_id}` : null,
    dbNow: meta.db_now,
    headId: meta.head_id === null ? null : String(meta.head_id),
    newerAfter: runningAnchor(meta.now_us),
    partial: null,
  };
}

async function listInIdOrder(db: Executor, f: ListFilters): Promise<JobPage> {
  if (f.cursor && FAILED_POSITION.test(f.cursor)) throw new QueueError('invalid_request', 'cursor: a place in the failed or running list goes with status=failed or status=running');
  const range = await idRange(db);
  const headId = range.max === null ? null : String(range.max);
  const empty = (): JobPage => ({ jobs: [], nextCursor: null, dbNow: range.now, headId, newerAfter: headId, partial: null });
  if (range.max === null || range.min === null) return empty();
  let upper = f.cursor ? BigInt(f.cursor) - 1n : range.max;
  if (f.maxId && BigInt(f.maxId) < upper) upper = BigInt(f.maxId);
  if (upper < range.min) return empty();

  const p = new SqlParams();
  const { conds, scans } = filterSql(f, p, fingerprintSql());
  const run = (lo: bigint | null, hi: bigint, limit: number) => windowQuery(db, LIST_COLUMNS, conds, p.values, f.status, lo, hi, limit);

  if (!scans) {
    const rows = await run(null, upper, f.limit + 1);
    const page = rows.slice(0, f.limit);
    return {
      ...empty(),
      jobs: page.map(toListed),
      nextCursor: rows.length > f.limit ? String(page[page.length - 1]!.job_id) : null,
    };
  }

  const started = performance.now();
  const found: unknown[] = [];
  // No job below `bottom` matches the filter's time windows: the windows stop there.
  let bottom = range.min;
  const raise = (floor: bigint | null) => {
    if (floor !== null && floor > bottom) bottom = floor;
  };
  if (f.createdSince) raise(await createdFloor(db, f, upper, range.min));
  // The finished window's floor is read only when the first window did not fill the page.
  let finishedFloored = !f.finishedSince;
  let hi = upper;
  while (hi >= bottom) {
    const lo = hi - SCAN_WINDOW + 1n > bottom ? hi - SCAN_WINDOW + 1n : bottom;
    found.push(...(await run(lo, hi, f.limit + 1 - found.length)));
    if (found.length > f.limit) {
      const page = found.slice(0, f.limit);
      return { ...empty(), jobs: page.map(toListed), nextCursor: String((page[page.length - 1] as { job_id: string }).job_id) };
    }
    hi = lo - 1n;
    if (!finishedFloored && hi >= bottom) {
      finishedFloored = true;
      raise(await finishedFloor(db, f, hi));
    }
    if (hi >= bottom && performance.now() - started > SCAN_BUDGET_MS) {
      return {
        ...empty(),
        jobs: found.map(toListed),
        nextCursor: String(hi + 1n),
        partial: { scannedDownTo: String(hi + 1n), scannedIds: Number(upper - hi) },
      };
    }
  }
  return { ...empty(), jobs: found.map(toListed) };
}

/** `(µs, job_id)` of a FAILED_POSITION, for a row comparison: (finished_at, job_id) on jobs_failed_idx, or (started_at, job_id) over the running rows. */
function positionSql(p: SqlParams, position: string): string {
  const m = FAILED_POSITION.exec(position);
  if (!m) throw new QueueError('invalid_request', 'not a place in the failed or running list (<microseconds>.<job id>)');
  return `(${fromMicros(p.add(m[1]))}, ${p.add(m[2])}::bigint)`;
}

/**
 * Failed rows a filtered failed list takes from jobs_failed_idx at a time (in the order of
 * failure) before testing the filter on them, and how many such windows one page may look at.
 */
const FAILED_WINDOW = 1_000;
const FAILED_WINDOWS_PER_PAGE = 50;

/**
 * The failed list (the dead letter) in the order jobs failed, newest first, keyset-paginated
 * on jobs_failed_idx: a job enqueued long ago that fails now is at the top, where operators
 * look, not at its old id's place. With more filters than the status (a dead-letter group,
 * a type, an error text), the planner cannot tell how rare the matches are, and would read
 * and sort every failed row of the type: instead the failed rows come in windows, in order,
 * and the filter is tested on each window, until the page is full (or FAILED_WINDOWS_PER_PAGE
 * windows were read: the cursor then continues where they ended).
 */
function listFailed(db: Executor, f: ListFilters): Promise<JobPage> {
  // One snapshot for the page and its "N new" anchor: see NEWER_MARGIN_MS.
  return onOneSnapshot(db, (s) => readFailed(s, f));
}

/**
 * How far before its read a MOMENT_ANCHOR is set. A job's finished_at (started_at) is its
 * failing (claiming) transaction's start, so a job that failed (started) a moment before the
 * read and committed after it is neither in the page nor after the read's clock: the anchor
 * is set this much earlier, and the count leaves out the jobs after it that the read saw
 * (MOMENT_ANCHOR's seen). Such a statement takes milliseconds; this is ample.
 */
const NEWER_MARGIN_MS = 5_000;

async function readFailed(db: Executor, f: ListFilters): Promise<JobPage> {
  const p = new SqlParams();
  const { conds, scans } = filterSql(f, p, fingerprintSql());
  // A filter no index serves (type, error text, a group…) goes window by window; the status
  // alone, or a job id, is one query.
  const filtered = scans;
  const found: Record<string, unknown>[] = [];
  let position = f.cursor ?? null;
  let more = true; // failed rows remain past `position`
  for (let w = 0; w < (filtered ? FAILED_WINDOWS_PER_PAGE : 1) && more && found.length <= f.limit; w++) {
    const q = new SqlParams();
    q.values.push(...p.values);
    // A plain job id (a cursor from a list in id order) is taken as "smaller ids than it".
    const afterIn = (ps: SqlParams) =>
      position === null ? [] : [FAILED_POSITION.test(position) ? `(finished_at, job_id) < ${positionSql(ps, position)}` : `job_id < ${ps.add(position)}::bigint`];
    const order = `ORDER BY finished_at DESC NULLS LAST, job_id DESC NULLS LAST`;
    const columns = `${LIST_COLUMNS}, ${MICROS('finished_at')} AS finished_us`;
    if (!filtered) {
      const { rows } = await db.query(`SELECT ${columns} FROM jobs WHERE ${[...conds, ...afterIn(q)].join(' AND ')} ${order} LIMIT ${q.add(f.limit + 1)}`, q.values);
      found.push(...rows);
      break;
    }
    const wq = new SqlParams();
    // "Failed in the last hour" bounds the windows themselves (jobs_failed_idx is in
    // finished_at order): past it no failure can match, and the list ends there instead of
    // reading FAILED_WINDOWS_PER_PAGE windows of older ones and offering a next page of none.
    const bound = sinceSql(f, 'finishedSince', wq);
    // So does "enqueued since": a job fails after it was enqueued (in a transaction begun
    // after its claim, which saw the enqueue committed), so one enqueued since T failed since T.
    const created = sinceMomentSql(f, 'createdSince', wq);
    const { rows: window } = await db.query(
      `SELECT job_id, ${MICROS('finished_at')} AS finished_us
         FROM jobs WHERE ${["status = 'failed'", ...afterIn(wq), ...(bound ? [bound] : []), ...(created ? [`finished_at >= ${created}`] : [])].join(' AND ')} ${order} LIMIT ${FAILED_WINDOW}`,
      wq.values,
    );
    more = window.length === FAILED_WINDOW;
    if (!window.length) break;
    const { rows } = await db.query(
      `SELECT ${columns} FROM jobs WHERE job_id = ANY(${q.add(window.map((r) => r.job_id))}::bigint[]) AND ${conds.join(' AND ')} ${order} LIMIT ${q.add(f.limit + 1 - found.length)}`,
      q.values,
    );
    found.push(...rows);
    const edge = window[window.length - 1]!;
    position = `${edge.finished_us}.${edge.job_id}`;
  }
  // After the page, on the same snapshot: the newest id, the clock, and the "N new" anchor
  // (how many matching jobs failed in the margin before the read, all of them in the list).
  const mq = new SqlParams();
  mq.values.push(...p.values);
  const { rows: [meta] } = await db.query(
    `SELECT (SELECT job_id FROM jobs ORDER BY job_id DESC LIMIT 1) AS head_id, now() AS db_now, ${failedAnchorSql(conds, mq)}`,
    mq.values,
  );
  const page = found.slice(0, f.limit) as { finished_us: string; job_id: string }[];
  const last = page[page.length - 1];
  // Rows past this page: a full page and more found, or windows left unread.
  const nextCursor = found.length > f.limit && last ? `${last.finished_us}.${last.job_id}` : filtered && more && position ? position : null;
  return {
    jobs: page.map(toListed),
    nextCursor,
    dbNow: meta.db_now,
    headId: meta.head_id === null ? null : String(meta.head_id),
    // "New" is what the read did not see: what failed after the anchor, less what it saw.
    newerAfter: meta.seen <= ANCHOR_SEEN_MAX ? `${meta.anchor_us}.0.${meta.seen}` : `${meta.now_us}.0`,
    partial: null,
  };
}

/**
 * The columns of the failed list's MOMENT_ANCHOR, read on the list's snapshot: the read's
 * moment (now_us), the anchor NEWER_MARGIN_MS before it (anchor_us), and how many of the
 * list's jobs failed after the anchor (seen, up to ANCHOR_SEEN_MAX + 1). `conds` and `p` are
 * the list's filter.
 */
function failedAnchorSql(conds: string[], p: SqlParams): string {
  const margin = `now() - ${p.add(NEWER_MARGIN_MS)}::int * interval '1 millisecond'`;
  return `${MICROS('now()')} AS now_us, ${MICROS(margin)} AS anchor_us,
          (SELECT count(*) FROM (SELECT 1 FROM jobs WHERE ${[...conds, `(finished_at, job_id) > (${margin}, 0)`].join(' AND ')} LIMIT ${ANCHOR_SEEN_MAX + 1}) t)::int AS seen`;
}

/**
 * The running list's MOMENT_ANCHOR: the read's own moment, with nothing seen after it. Not a
 * margin before it, as the failed list's: its seen jobs leave it within seconds (they finish),
 * and each one gone would hide a new one from the count. A claim that began before the read and
 * committed after it is missed — from this count; the next page read shows it. `nowUs` is
 * read by the snapshot's first statement, at its start (statement_timestamp, not the
 * transaction's now(), which BEGIN fixed a round trip before the snapshot): a claim committed
 * in between is in the page, and must not be counted as new too.
 */
const runningAnchor = (nowUs: string) => `${nowUs}.0`;

/** Ids one probe of createdFloor looks at, and how many probes (each twice as far down as the last) it makes at most. */
const FLOOR_PROBE_IDS = 64;
const FLOOR_PROBES = 40;

/**
 * The lowest id a job enqueued since the filter's createdSince can have, from the ids at or
 * below `hi` (null: no bound found above `min`). created_at is not in id order, so the id
 * where it passes the window's start bounds nothing: it is the start of the enqueuing
 * transaction, and one a producer holds open (lib/client.ts transaction()) draws its ids
 * long after, past jobs enqueued since. What bounds is a job that completed before the
 * window opened: its completion began after its claim had committed, which saw its enqueue
 * committed, which drew its id; every smaller id was drawn before that, each by a
 * transaction that had begun already — enqueued before the window, all of them (on the
 * database clock). Each probe looks for the newest such job among FLOOR_PROBE_IDS ids, twice
 * as far below `hi` as the probe before, and the first found is the bound: the list reads at
 * most about twice the ids drawn since the window opened. A backlog enqueued before it and
 * never run gives no bound: the list reads through it as for a filter no index serves.
 */
export async function createdFloor(db: Executor, f: JobFilter, hi: bigint, min: bigint): Promise<bigint | null> {
  const p = new SqlParams();
  const moment = sinceMomentSql(f, 'createdSince', p);
  if (!moment) return null;
  const w = `${p.add(FLOOR_PROBE_IDS)}::bigint`;
  const at = `(${p.add(String(hi))}::bigint - ((1::bigint << i) - 1) * ${w})`;
  const { rows } = await db.query(
    `WITH RECURSIVE probe(i, hit) AS (
       SELECT 0, NULL::bigint
       UNION ALL
       SELECT i + 1, (SELECT job_id FROM jobs
                       WHERE job_id <= ${at} AND job_id > ${at} - ${w} AND status = 'completed' AND finished_at < ${moment}
                       ORDER BY job_id DESC LIMIT 1)
         FROM probe WHERE hit IS NULL AND i < ${p.add(FLOOR_PROBES)} AND ${at} >= ${p.add(String(min))}::bigint
     )
     SELECT max(hit)::text AS hit FROM probe`,
    p.values,
  );
  return rows[0].hit === null ? null : BigInt(rows[0].hit) + 1n;
}

/** Jobs in a finished window up to which finishedFloor reads their lowest id. */
const FINISHED_FLOOR_ROWS = 10_000;

/**
 * The lowest id of the jobs finished since the filter's finishedSince, of those at or below
 * `hi` (one past `hi` when there are none), read from jobs_finished_idx; null when more than
 * FINISHED_FLOOR_ROWS finished in the window. A job enqueued long ago may finish now: no id
 * bounds a finished window but its own jobs'.
 */
export async function finishedFloor(db: Executor, f: JobFilter, hi: bigint): Promise<bigint | null> {
  const p = new SqlParams();
  const moment = sinceMomentSql(f, 'finishedSince', p);
  if (!moment) return null;
  const { rows } = await db.query(
    `SELECT count(*)::int AS n, min(job_id)::text AS lowest
       FROM (SELECT job_id FROM jobs WHERE finished_at >= ${moment} AND job_id <= ${p.add(String(hi))}::bigint LIMIT ${p.add(FINISHED_FLOOR_ROWS + 1)}) t`,
    p.values,
  );
  if (rows[0].n > FINISHED_FLOOR_ROWS) return null;
  return rows[0].lowest === null ? hi + 1n : BigInt(rows[0].lowest);
}

/** Status rows in an id window below which the status index drives a windowed query (see windowQuery). */
const SPARSE_STATUS_ROWS = 20_000;

/**
 * One query over the ids lo..hi (newest first) with conditions no index serves. Left to
 * itself the planner scans the primary key over the window (the ids are perfectly
 * correlated with the heap), which reads every row of the window. When the filter has a
 * status that is sparse in the window (counted, capped, on jobs_status_idx), the rows of
 * that status are taken from the status index first and only those are read.
 */
export async function windowQuery(
  db: Executor,
  columns: string,
  conds: string[],
  values: unknown[],
  status: string | undefined,
  lo: bigint | null,
  hi: bigint,
  limit: number,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any[]> {
  const q = new SqlParams();
  q.values.push(...values);
  const where = [...conds, `job_id <= ${q.add(String(hi))}::bigint`];
  if (lo !== null) {
    where.push(`job_id >= ${q.add(String(lo))}::bigint`);
    // Completed rows are in no index by status (running ones are in jobs_running_idx): counting them
    // in a window would read it.
    if (status && status !== 'completed') {
      const sparse = await db.query(
        `SELECT count(*)::int AS n FROM (SELECT 1 FROM jobs
            WHERE status = $1::job_status AND (status, job_id) BETWEEN ($1::job_status, $2::bigint) AND ($1::job_status, $3::bigint) LIMIT $4) t`,
        [status, String(lo), String(hi), SPARSE_STATUS_ROWS],
      );
      if (sparse.rows[0].n < SPARSE_STATUS_ROWS) {
        const s = q.add(status);
        where.push(
          `job_id = ANY(ARRAY(SELECT job_id FROM jobs WHERE status = ${s}::job_status AND (status, job_id) BETWEEN (${s}::job_status, ${q.add(String(lo))}::bigint) AND (${s}::job_status, ${q.add(String(hi))}::bigint)))`,
        );
      }
    }
  }
  const { rows } = await db.query(
    `SELECT ${columns} FROM jobs WHERE ${where.join(' AND ')} ORDER BY job_id DESC LIMIT ${q.add(limit)}`,
    q.values,
  );
  return rows;
}

/** The current rows of these jobs, whatever their status (the console refreshes the rows it shows). */
export async function jobsByIds(db: Executor, ids: readonly string[]): Promise<{ jobs: ListedJob[]; dbNow: Date }> {
  const { rows } = await db.query(
    `SELECT ${LIST_COLUMNS}, now() AS db_now FROM jobs WHERE job_id = ANY($1::bigint[]) ORDER BY job_id DESC`,
    [ids],
  );
  return { jobs: rows.map(toListed), dbNow: rows[0]?.db_now ?? (await dbNow(db)) };
}

/**
 * A read answer as it stands `ms` later: the database clock moved on, every lease shorter
 * (for answers shared from lib/server/read-cache.ts).
 */
export function agedBy<T extends { jobs: ListedJob[]; dbNow: Date }>(r: T, ms: number): T {
  if (ms <= 0) return r;
  return {
    ...r,
    dbNow: new Date(r.dbNow.getTime() + ms),
    jobs: r.jobs.map((j) => (j.leaseRemainingMs === null ? j : { ...j, leaseRemainingMs: j.leaseRemainingMs - ms })),
  };
}

/** Jobs matching a filter that are newer than `afterId` ("N new" above what the console shows). */
export const NEWER_CAP = 1_000;
export async function countNewer(db: Executor, f: JobFilter, afterId: string): Promise<{ count: number; capped: boolean }> {
  const p = new SqlParams();
  const { conds, scans } = filterSql(f, p, fingerprintSql());
  const anchor = MOMENT_ANCHOR.exec(afterId);
  if (anchor) {
    // The failed (running) list's anchor: jobs that failed (started) after it, whatever their
    // ids, less the ones the page's read saw there (momentAnchorSql).
    if (f.status !== 'failed' && f.status !== 'running') throw new QueueError('invalid_request', 'after: a moment (<microseconds>.<job id>) goes with status=failed or status=running');
    // Never more than a read can have seen: the count's LIMIT grows with it.
    const seen = Math.min(Number(anchor[3] ?? 0), ANCHOR_SEEN_MAX);
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM jobs WHERE ${[...conds, `(${MOMENT_LISTS[f.status]}, job_id) > ${positionSql(p, `${anchor[1]}.${anchor[2]}`)}`].join(' AND ')} LIMIT ${seen + NEWER_CAP + 1}) t`,
      p.values,
    );
    // Seen jobs requeued or deleted since would make this fewer: never below none.
    const n = Math.max(0, (rows[0].n as number) - seen);
    return { count: Math.min(n, NEWER_CAP), capped: n > NEWER_CAP };
  }
  const after = p.add(afterId);
  const where = [...conds, `job_id > ${after}::bigint`];
  // A filter no index serves looks at the SCAN_WINDOW ids above the anchor, no further.
  // The anchor is any bigint a caller sends: near the top of the range, anchor + window
  // would overflow (a 500), so the bound stops at the largest bigint.
  if (scans) where.push(`job_id <= LEAST(${after}::bigint, ${MAX_JOB_ID - SCAN_WINDOW}) + ${SCAN_WINDOW}`);
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM jobs WHERE ${where.join(' AND ')} LIMIT ${NEWER_CAP + 1}) t`,
    p.values,
  );
  const n = rows[0].n as number;
  return { count: Math.min(n, NEWER_CAP), capped: n > NEWER_CAP };
}

export async function dbNow(db: Executor): Promise<Date> {
  const { rows } = await db.query('SELECT now() AS now');
  return rows[0].now;
}

export interface Attempt {
  attempt: number;
  workerId: string;
  startedAt: Date;
  heartbeatAt: Date | null;
  finishedAt: Date | null;
  /** null while the attempt is running. */
  outcome: AttemptOutcome | null;
  error: string | null;
  errorStack: string | null;
}

export interface JobDetail {
  job: Job;
  /** The payload exactly as stored (jsonb text): big integers keep every digit. Null when not asked for. */
  payloadText: string | null;
  attempts: Attempt[];
  leaseRemainingMs: number | null;
  /** See ListedJob.ownerGone. */
  ownerGone: string | null;
  /** Another job, unfinished, that holds this job's singleton key (this one has finished). */
  singletonHolder: string | null;
  dbNow: Date;
  /**
   * For a job waiting its turn (queued or retrying) or running, the live workers that serve
   * its queue and how many of them have a handler for its type (a worker claims no other
   * type): none of them is why such a job never starts; the live workers anywhere (each runs
   * the recover sweep, which moves an expired lease on), how long ago the sweep last ran and
   * past how long that means it has stopped (as ConsoleStats); and whether its queue is
   * paused, or controlled (paused or limited: no claim takes over an expired lease of such a
   * queue, only the sweep moves it on) (ops.queueWorkersForType). Absent for finished jobs, or when not asked for (the
   * console's read adds it).
   */
  workers?: { onQueue: number; withHandler: number; anywhere: number; sweptAgoMs: number | null; sweepStaleAfterMs: number; queuePaused: boolean; queueControlled: boolean };
  /** For a due waiting job, how many due jobs of its queue claims take first (ops.jobsAhead); absent otherwise. */
  ahead?: JobsAhead;
}

/**
 * A job's attempts, oldest first: the ended ones and the one in progress, which the
 * job_attempts view reads from the running job's own row (drizzle/0026_job_attempts_view.sql).
 */
export const ATTEMPTS_OF_JOB_SQL = `
SELECT attempt, worker_id, started_at, heartbeat_at, finished_at, outcome, error, error_stack
  FROM job_attempts WHERE job_id = $1::bigint ORDER BY attempt`;

/**
 * One job with its attempts. `payload: false` leaves the payload out (job.payload and
 * payloadText): it never changes after the enqueue, and a page refreshing a job every two
 * seconds would otherwise carry up to a megabyte of it each time.
 */
export async function getJob(db: Executor, id: string, { payload = true }: { payload?: boolean } = {}): Promise<JobDetail | null> {
  const { rows } = await db.query(
    `SELECT job_id, queue, type, status, attempt_count, max_attempts, attempt_budget, worker_id, heartbeat_at,
            lease_expires_at, run_at, priority, cancel_requested_at, idempotency_key, singleton_key, result_key, error, checkpoints,
            lease_lost_streak, created_at, started_at, finished_at,
            ${payload ? 'payload, payload::text AS payload_text' : 'NULL::jsonb AS payload, NULL::text AS payload_text'},
            extract(epoch FROM lease_expires_at - now()) * 1000 AS lease_remaining_ms, ${OWNER_GONE_SQL}, now() AS db_now,
            ${singletonHolderSql('jobs')} AS singleton_holder
       FROM jobs WHERE job_id = $1::bigint`,
    [id],
  );
  const r = rows[0];
  if (!r) return null;
  const job = toJob(r);
  const att = await db.query(ATTEMPTS_OF_JOB_SQL, [id]);
  const attempts: Attempt[] = att.rows.map((a) => ({
    attempt: a.attempt,
    workerId: a.worker_id,
    startedAt: a.started_at,
    heartbeatAt: a.heartbeat_at,
    finishedAt: a.finished_at,
    outcome: a.outcome,
    error: a.error,
    errorStack: a.error_stack,
  }));
  return {
    job,
    payloadText: r.payload_text,
    attempts,
    leaseRemainingMs: r.lease_remaining_ms === null ? null : Number(r.lease_remaining_ms),
    ownerGone: r.owner_gone ?? null,
    singletonHolder: r.singleton_holder === null ? null : String(r.singleton_holder),
    dbNow: r.db_now,
  };
}

export interface Stats {
  counts: Record<JobStatus, number>;
  /** Per queue; kinds where the counts are not all exact (the console's and the metrics' read). */
  queues: {
    queue: string;
    counts: Record<JobStatus, number>;
    kinds?: Record<JobStatus, CountKind>;
    /** The queue's oldest due job's age, and whether the queue is paused (the console's and the metrics' read). */
    oldestDueAgeMs?: number | null;
    paused?: boolean;
    /** Worker processes alive that consume the queue (the console's and the metrics' read). */
    workersAlive?: number;
  }[];
  oldestQueuedAgeMs: number | null;
  runningExpired: number;
  workersAlive: number;
  /** Enabled, unpaused schedules whose due tick cannot be enqueued (job.ts SCHEDULES_FAILING_SQL). */
  schedulesFailing: number;
  /** Schedules run one at a time whose latest tick was skipped (job.ts SCHEDULES_SKIPPING_SQL). */
  schedulesSkipping: number;
  /** How long ago the recover sweep last ran (null: never); the metrics' read only. */
  sweptAgoMs?: number | null;
  /** What holds back vacuum of jobs (console-stats.ts DatabaseHealth); the metrics' read only. */
  database?: DatabaseHealth;
  dbNow: Date;
}

const zeroCounts = () => Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;

/**
 * `aliveWithinMs`: a worker counts as alive when it heartbeated this recently — the lease,
 * as listWorkers' staleAfterMs, so the CLI, the metrics and the console agree.
 */
export async function getStats(db: Executor, opts: { aliveWithinMs: number }): Promise<Stats> {
  const { aliveWithinMs } = opts;
  const [byQueue, extra] = await Promise.all([
    db.query(`SELECT queue, status, count(*)::bigint AS n FROM jobs GROUP BY queue, status`),
    db.query(
      `SELECT (SELECT extract(epoch FROM now() - min(run_at)) * 1000 FROM jobs
                WHERE status IN ('queued', 'retrying') AND run_at <= now()) AS oldest_ms,
              (SELECT count(*) FROM jobs WHERE status = 'running' AND lease_expires_at < now()) AS expired,
              (SELECT count(*) FROM workers WHERE stopped_at IS NULL AND heartbeat_at > now() - $1::int * interval '1 ms') AS alive,
              ${SCHEDULES_FAILING_SQL} AS schedules_failing,
              ${SCHEDULES_SKIPPING_SQL} AS schedules_skipping,
              now() AS db_now`,
      [aliveWithinMs],
    ),
  ]);
  const counts = zeroCounts();
  const queues = new Map<string, Record<JobStatus, number>>();
  for (const r of byQueue.rows) {
    const n = Number(r.n);
    counts[r.status as JobStatus] += n;
    if (!queues.has(r.queue)) queues.set(r.queue, zeroCounts());
    queues.get(r.queue)![r.status as JobStatus] += n;
  }
  const e = extra.rows[0];
  return {
    counts,
    queues: [...queues].map(([queue, c]) => ({ queue, counts: c })).sort((a, b) => a.queue.localeCompare(b.queue)),
    oldestQueuedAgeMs: e.oldest_ms === null ? null : Math.round(Number(e.oldest_ms)),
    runningExpired: Number(e.expired),
    workersAlive: Number(e.alive),
    schedulesFailing: Number(e.schedules_failing),
    schedulesSkipping: Number(e.schedules_skipping),
    dbNow: e.db_now,
  };
}

export interface WorkerRow {
  workerId: string;
  host: string;
  pid: number;
  queues: string[];
  /** The job types it has handlers for, the only ones it claims (null: a process before migration 0013, which claimed any). */
  types: string[] | null;
  concurrency: number;
  startedAt: Date;
  heartbeatAt: Date;
  stoppedAt: Date | null;
  /** How it ended when it did not stop by itself ("killed by SIGKILL"), as its supervisor saw; null otherwise. */
  exit: string | null;
  jobsInHand: number;
  heartbeatAgeMs: number;
  /** Not stopped, but silent for longer than `staleAfterMs`: its jobs' leases run out and recover takes them. */
  stale: boolean;
  /** The process's counters (worker/runner.ts metrics()), as last reported: a worker id registered again adds its earlier incarnations'. */
  metrics: Record<string, unknown>;
  /** When an operator quieted it (it claims nothing new), and who; null while it claims. */
  quietAt: Date | null;
  quietBy: string | null;
  /** The process has read this request and claims nothing (its last heartbeat said so): "quiet", not "quieting". */
  quietSeen: boolean;
  /**
   * An ended process's jobs in hand when it ended, as their lost leases recorded them (those
   * lost after its last heartbeat; the first LOST_JOBS_SHOWN, suspects first, then by id; "its
   * jobs" lists every job it lost), each saying whether it is a suspect now (SUSPECT_STREAK,
   * and not finished): after a crash, the likely poison among them. [] while it runs.
   */
  lostJobs: { id: string; suspect: boolean }[];
  /** How many jobs it had in hand when it ended (lostJobs shows the first few); 0 while it runs. */
  lostJobsTotal: number;
}

/** How many of an ended worker's lost jobs its row names. */
export const LOST_JOBS_SHOWN = 5;

/**
 * How many worker rows a read lists: the live ones first, then the silent ones, then the latest ended. The rows are
 * kept a week (WORKER_ROWS_KEEP_MS), and a process restarted in a crash loop leaves one a few
 * seconds: the rest are counted (countWorkers), not listed.
 */
export const WORKERS_LISTED = 500;

/** Every worker row on file (a week's incarnations): said beside a full list (WORKERS_LISTED), which leaves the rest out. */
export async function countWorkers(db: Executor): Promise<number> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM workers`);
  return rows[0].n;
}

export async function listWorkers(db: Executor, opts: { staleAfterMs?: number } = {}): Promise<WorkerRow[]> {
  const staleAfterMs = opts.staleAfterMs ?? 60_000;
  const { rows } = await db.query(
    `SELECT w.*, extract(epoch FROM now() - w.heartbeat_at) * 1000 AS heartbeat_age_ms,
            (SELECT count(*) FROM jobs j WHERE j.status = 'running' AND j.worker_id = w.worker_id) AS jobs_in_hand,
            -- Read: this request's token reported back (a process of the version before
            -- tokens reports true).
            w.quiet_at IS NOT NULL AND (w.metrics->'quiet' = 'true'::jsonb OR w.metrics->>'quiet' = ${quietTokenSql('w')}) AS quiet_seen,
            -- An ended process's lost leases (ended_attempts_lost_idx): the jobs in hand when it
            -- ended, those lost after its last sign of life. A lease it lost while alive (a
            -- renewal refused, a database hiccup) was taken over before a heartbeat it sent
            -- later, and is no part of its end. A cancelled or completed job is no suspect
            -- any more (the jobs list's rule).
            -- The suspects first: at a concurrency of 20, the likely poison must not be past the
            -- first few shown.
            coalesce(lost.shown, '[]'::json) AS lost_jobs, coalesce(lost.total, 0) AS lost_jobs_total
       FROM workers w
       -- One pass over an ended process's lost leases for both the first shown and the count.
       LEFT JOIN LATERAL (
         SELECT json_agg(json_build_object('id', l.job_id::text, 'suspect', l.suspect) ORDER BY l.k) FILTER (WHERE l.k <= ${LOST_JOBS_SHOWN}) AS shown,
                count(*) AS total
           FROM (SELECT e.job_id, s.suspect, row_number() OVER (ORDER BY s.suspect DESC, e.job_id) AS k
                   FROM ended_attempts e LEFT JOIN jobs j ON j.job_id = e.job_id
                  CROSS JOIN LATERAL (SELECT coalesce(j.lease_lost_streak >= ${SUSPECT_STREAK} AND j.status NOT IN ('completed', 'cancelled'), false) AS suspect) s
                  WHERE w.stopped_at IS NOT NULL AND e.worker_id = w.worker_id AND e.outcome = 'lease_lost' AND e.finished_at >= w.heartbeat_at) l
       ) lost ON true
      -- A stable order (the workers page's rows must not swap places under an operator's
      -- click at each heartbeat, as ordering by the last heartbeat did): the live processes by
      -- host and start, then the silent ones (stale), then the ended ones, the latest first.
      ORDER BY w.stopped_at IS NOT NULL, w.heartbeat_at < now() - $1::int * interval '1 ms', w.stopped_at DESC,
               w.host, w.started_at, w.worker_id
      LIMIT ${WORKERS_LISTED}`,
    [Math.round(staleAfterMs)],
  );
  return rows.map((r) => ({
    workerId: r.worker_id,
    host: r.host,
    pid: r.pid,
    queues: r.queues,
    types: r.types,
    concurrency: r.concurrency,
    startedAt: r.started_at,
    heartbeatAt: r.heartbeat_at,
    stoppedAt: r.stopped_at,
    exit: r.exit ?? null,
    jobsInHand: Number(r.jobs_in_hand),
    heartbeatAgeMs: Math.round(Number(r.heartbeat_age_ms)),
    stale: r.stopped_at === null && Number(r.heartbeat_age_ms) > staleAfterMs,
    metrics: r.metrics ?? {},
    quietAt: r.quiet_at ?? null,
    lostJobs: r.lost_jobs ?? [],
    lostJobsTotal: Number(r.lost_jobs_total),
    quietBy: r.quiet_by ?? null,
    quietSeen: r.quiet_seen === true,
  }));
}

/**
 * The ids of the jobs matching a filter, newest first, one keyset page at a time (the
 * CLI's bulk actions resolve "all matching" with it, then act batch by batch).
 */
export async function listJobIds(db: Executor, f: ListFilters): Promise<{ ids: string[]; seen: [string, Seen][]; nextCursor: string | null }> {
  const page = await listJobs(db, f);
  return {
    ids: page.jobs.map((j) => j.id),
    seen: page.jobs.map((j) => [j.id, { status: j.status, attempt: j.attemptCount }]),
    nextCursor: page.nextCursor,
  };
}
