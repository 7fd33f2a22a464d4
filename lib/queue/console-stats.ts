/**
 * The overview's numbers, computed so that their cost does not grow with the table:
 *
 *  - Per status, a count capped at COUNT_CAP rows (an index-only scan of the partial index for that status
 *    that stops at the cap). Below the cap the count is exact. At the cap it is an
 *    estimate ("≈"): the table's live row count (pg_stat_user_tables, kept current by the
 *    server) minus the exact counts, shared among the large statuses by their fractions
 *    in the last ANALYZE (pg_stats). With no statistics yet it is "at least COUNT_CAP".
 *  - Per queue and status: exact for the small statuses (one GROUP BY over at most
 *    GROUP_CAP rows); for the large ones, the status's count shared among queues by the
 *    (queue, status) frequencies of the extended statistics jobs_queue_status_stats
 *    (migration 0003), which cost nothing on writes — "unknown" for a queue they do not
 *    name (one that filled since the last ANALYZE, or a small one), never a made-up 0.
 *  - Per queue: waiting jobs (queued or retrying) and due ones (capped at DUE_CAP) and the
 *    oldest due job, from jobs_claim_idx, next to the ids waiting in the queue's Redis list:
 *    the health of the wake-up signal. The waiting count makes a queue's queued and
 *    retrying counts exact (below the cap) however large those statuses are overall.
 *  - Running jobs with an expired lease (jobs_running_idx), live and stale workers, and
 *    the workers' cumulative counters (for the throughput and failure charts).
 *
 * Nothing here runs per viewer: stats-cache.ts shares one computation among all of them.
 */
import { RECOVER_INTERVAL_MS_DEFAULT } from '../config';
import type { Executor } from '../db/client';
import { type QueueControl, queueControls } from './ops';
import { totalsOf, totalsSql, WORKER_METRICS, type WorkerTotals } from './worker-totals';

export { readWorkerTotals, type WorkerTotals } from './worker-totals';
import type { Doorbell } from './signal';
import { levelByLevel, SCHEDULES_FAILING_SQL, SCHEDULES_SKIPPING_SQL, SUSPECT_STREAK, SWEPT_AGO_MS_SQL } from './job';
import { JOB_STATUSES, type JobStatus } from './status';

export const COUNT_CAP = 50_000;
export const GROUP_CAP = 5_000;
export const DUE_CAP = 10_000;
export const QUEUES_MAX = 200;
export const QUEUE_STATUS_STATS = 'jobs_queue_status_stats';

/**
 * exact; estimate (from the table statistics); atLeast (a capped count); unknown (a queue's
 * count of a large status when the statistics do not name the queue: shown as "?", never as 0).
 */
export type CountKind = 'exact' | 'estimate' | 'atLeast' | 'unknown';

export interface QueueStats {
  queue: string;
  counts: Record<JobStatus, number>;
  kinds: Record<JobStatus, CountKind>;
  /** Queued or retrying jobs that are due now (capped at DUE_CAP: see dueCapped). */
  due: number;
  dueCapped: boolean;
  /**
   * Of the due jobs counted, those of a type no live worker on the queue has a handler for:
   * they wait for such a worker, and no ring is missing for them (a claim drops their ids).
   * 0 when a live worker takes any type, or none is live (the queue is unserved then).
   */
  dueUnhandled: number;
  /**
   * Of the due jobs counted (a type some live worker handles), the suspects: jobs that lost
   * their lease twice in a row (a likely poison, SUSPECT_STREAK), which a worker takes only
   * while it holds no other suspect. They wait their turn, their rings dropped meanwhile: no
   * wake-up is missing for them either.
   */
  dueSuspect: number;
  /** Age of the oldest due job, or null when none is due. */
  oldestDueAgeMs: number | null;
  /** Job ids waiting in the queue's Redis list; null without Redis. */
  signalBacklog: number | null;
  /** Pause and limits shared by every worker (null: none, the fast path). */
  controls: QueueControl | null;
  /** Worker processes alive (a heartbeat within a lease) that consume this queue. */
  workersAlive: number;
}

export interface ConsoleStats {
  /** The database clock when these numbers were read. */
  computedAt: Date;
  computeMs: number;
  counts: Record<JobStatus, number>;
  kinds: Record<JobStatus, CountKind>;
  total: number;
  totalKind: CountKind;
  /** What the estimates rest on: the last ANALYZE of jobs and the live row count. */
  estimates: { analyzedAt: Date | null; liveRows: number | null; countCap: number };
  queues: QueueStats[];
  /** More than QUEUES_MAX queues hold waiting jobs: \`queues\` lists the first by name. */
  queuesTruncated: boolean;
  /** The oldest due job of every queue, listed or not. */
  oldestQueuedAgeMs: number | null;
  runningExpired: number;
  workersAlive: number;
  workersStale: number;
  /** Enabled, unpaused schedules whose due tick cannot be enqueued (their lastError is set). */
  schedulesFailing: number;
  /** Schedules run one at a time whose latest tick was skipped, a run still unfinished (job.ts SCHEDULES_SKIPPING_SQL). */
  schedulesSkipping: number;
  /** How long ago the recover sweep last ran (database clock); null: never recorded (the migration starts the clock). */
  sweptAgoMs: number | null;
  /** Older than this while workers are alive, the sweep has stopped: the console says so. */
  sweepStaleAfterMs: number;
  signal: { usingRedis: boolean; redisConfigured: boolean; due: number; backlog: number | null };
  workerTotals: WorkerTotals;
  database: DatabaseHealth;
  dbNow: Date;
}

/**
 * What holds back vacuum of the jobs table, and what that costs. `oldestTransaction`: the
 * client session of this database whose open transaction is oldest among those that hold a
 * snapshot or a transaction id (while it lasts, vacuum cannot clear any row finished after
 * it began, and claims and counts read past them); sessions of other roles are seen only by
 * a role with pg_read_all_stats. `deadRows`: the statistics collector's dead rows in jobs.
 * `xidAge`: how many transaction ids old the database's oldest unfrozen one is (PostgreSQL
 * stops accepting writes near 2^31, unless vacuum freezes them first).
 */
export interface DatabaseHealth {
  oldestTransaction: { ageMs: number; pid: number; state: string | null; application: string | null; user: string | null } | null;
  deadRows: number | null;
  xidAge: number | null;
}

/**
 * How old the last sweep may grow before the console calls it stopped: ten intervals (a sweep
 * can be slow: a big recovery, a prune's time budget, a busy database), and never under a
 * minute.
 */
export const sweepStaleAfterMs = (recoverMs: number) => Math.max(60_000, 10 * recoverMs);

function databaseHealth(oldest: Record<string, unknown> | null, dead: unknown, xidAge: unknown): DatabaseHealth {
  const known = (v: unknown) => (v === null || v === undefined ? null : Math.round(Number(v)));
  return {
    oldestTransaction: oldest
      ? {
          ageMs: Math.max(0, Math.round(Number(oldest.ageMs))),
          pid: Number(oldest.pid),
          state: (oldest.state as string | null) ?? null,
          application: (oldest.application as string | null) ?? null,
          user: (oldest.user as string | null) ?? null,
        }
      : null,
    deadRows: known(dead),
    xidAge: known(xidAge),
  };
}

/** The queues holding queued or retrying jobs, by name: a loose index scan of jobs_claim_idx. */
const WAITING_QUEUES = `q AS (
         (SELECT queue FROM jobs WHERE status IN ('queued', 'retrying') ORDER BY queue LIMIT 1)
         UNION ALL
         SELECT (SELECT queue FROM jobs WHERE status IN ('queued', 'retrying') AND queue > q.queue ORDER BY queue LIMIT 1)
           FROM q WHERE q.queue IS NOT NULL
       )`;

const zero = <T>(v: T) => Object.fromEntries(JOB_STATUSES.map((s) => [s, v])) as Record<JobStatus, T>;

/** The table's live row count and the planner's statistics of status and queue (what estimates are made from). */
const BASIS_SQL = `SELECT st.n_live_tup::float8 AS live, st.n_dead_tup::float8 AS dead, greatest(st.last_analyze, st.last_autoanalyze) AS analyzed_at,
              (SELECT most_common_vals::text::text[] FROM pg_stats
                WHERE schemaname = st.schemaname AND tablename = 'jobs' AND attname = 'status') AS status_vals,
              (SELECT most_common_freqs FROM pg_stats
                WHERE schemaname = st.schemaname AND tablename = 'jobs' AND attname = 'status') AS status_freqs,
              (SELECT most_common_vals::text::text[] FROM pg_stats
                WHERE schemaname = st.schemaname AND tablename = 'jobs' AND attname = 'queue') AS queue_vals,
              (SELECT most_common_freqs FROM pg_stats
                WHERE schemaname = st.schemaname AND tablename = 'jobs' AND attname = 'queue') AS queue_freqs
         FROM pg_stat_user_tables st
        WHERE st.relid = 'jobs'::regclass`;

export async function computeConsoleStats(
  db: Executor,
  opts: { doorbell?: Doorbell | null; leaseMs: number; /** The workers' sweep interval (LEASEHOLD_RECOVER_MS). */ recoverMs?: number },
): Promise<ConsoleStats> {
  const t0 = performance.now();
  const basis = await db.query(BASIS_SQL);
  const b = basis.rows[0] ?? {};
  const live: number | null = b.live ?? null;
  const statusFreq = new Map<string, number>();
  (b.status_vals ?? []).forEach((v: string, k: number) => statusFreq.set(v, Number(b.status_freqs[k])));
  // No index holds completed rows by status (jobs_finished_idx holds them by finish time, which
  // a count by status cannot use; two index entries fewer per job on the hot path): they
  // are counted only while the statistics say there are fewer than the cap, and estimated
  // beyond (like every large status), without reading the table.
  const counted = JOB_STATUSES.filter((st) => st !== 'completed' || live === null || (statusFreq.get(st) ?? 0) * live < COUNT_CAP);
  const [capped, extMcv, misc, waiting, controls] = await inTurn([
    () =>
      db.query(
      // One literal status per branch: the planner can then use the partial index that
      // serves it (jobs_status_idx, jobs_running_idx, jobs_claim_idx) instead of scanning.
      counted.map(
        (st) => `SELECT '${st}'::text AS status, (SELECT count(*) FROM (SELECT 1 FROM jobs WHERE status = '${st}' LIMIT $1) t)::int AS n`,
      ).join('\n UNION ALL '),
      [COUNT_CAP],
    ),
    () =>
      db.query(
      `SELECT s.most_common_vals[i][1] AS queue, s.most_common_vals[i][2] AS status, s.most_common_freqs[i] AS freq
         FROM pg_stats_ext s, generate_subscripts(s.most_common_vals, 1) AS i
        WHERE s.statistics_name = $1 AND s.tablename = 'jobs' AND s.schemaname = current_schema()`,
      [QUEUE_STATUS_STATS],
    ),
    () =>
      db.query(
      `SELECT (SELECT count(*) FROM (SELECT 1 FROM jobs WHERE status = 'running' AND lease_expires_at < now() LIMIT $2) t)::int AS expired,
              (SELECT count(*) FROM workers WHERE stopped_at IS NULL AND heartbeat_at > now() - $1::int * interval '1 ms')::int AS alive,
              (SELECT count(*) FROM workers WHERE stopped_at IS NULL AND heartbeat_at <= now() - $1::int * interval '1 ms'
                                              AND heartbeat_at > now() - interval '1 day')::int AS stale,
              (SELECT ${totalsSql('json')} FROM ${WORKER_METRICS} w) AS totals,
              (SELECT json_object_agg(q, alive) FROM (
                 SELECT q, (count(*) FILTER (WHERE heartbeat_at > now() - $1::int * interval '1 ms' AND quiet_at IS NULL))::int AS alive
                   FROM workers, unnest(queues) AS q
                  WHERE stopped_at IS NULL AND heartbeat_at > now() - interval '1 hour' GROUP BY q) w) AS worker_queues,
              ${SCHEDULES_FAILING_SQL} AS schedules_failing,
              ${SCHEDULES_SKIPPING_SQL} AS schedules_skipping,
              ${SWEPT_AGO_MS_SQL} AS swept_ago_ms,
              (SELECT json_build_object('ageMs', extract(epoch FROM now() - a.xact_start)::float8 * 1000, 'pid', a.pid, 'state', a.state,
                                        'application', nullif(a.application_name, ''), 'user', a.usename)
                 FROM pg_stat_activity a
                WHERE a.datname = current_database() AND a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()
                  AND a.xact_start IS NOT NULL AND (a.backend_xmin IS NOT NULL OR a.backend_xid IS NOT NULL)
                ORDER BY a.xact_start LIMIT 1) AS oldest_xact,
              (SELECT age(datfrozenxid) FROM pg_database WHERE datname = current_database())::float8 AS xid_age,
              now() AS db_now`,
      [opts.leaseMs, COUNT_CAP],
    ),
    // Queues with waiting jobs: a loose index scan of jobs_claim_idx (one probe per queue),
    // then per queue its waiting jobs in due order (capped): how many, how many are due,
    // and the oldest. One more queue than listed says the list is cut.
    () =>
      db.query(
      `WITH RECURSIVE ${WAITING_QUEUES}
       SELECT q.queue, w.waiting, w.queued, w.retrying, w.due, w.due_unhandled, w.due_suspect, w.oldest_ms
         FROM q,
         -- The types the queue's live workers have handlers for; NULL when one of them takes
         -- any type (recorded none) or none is live (as queueHandledTypes in statements/queues.ts).
         LATERAL (
           SELECT CASE WHEN count(*) = 0 OR bool_or(types IS NULL) THEN NULL
                       ELSE coalesce(array_agg(DISTINCT t) FILTER (WHERE t IS NOT NULL), '{}') END AS types
             FROM workers LEFT JOIN LATERAL unnest(types) AS t ON true
            WHERE stopped_at IS NULL AND heartbeat_at > now() - $2::int * interval '1 ms' AND quiet_at IS NULL AND q.queue = ANY(queues)
         ) h,
         LATERAL (
           SELECT count(*)::int AS waiting, (count(*) FILTER (WHERE status = 'queued'))::int AS queued,
                  (count(*) FILTER (WHERE status = 'retrying'))::int AS retrying,
                  (count(*) FILTER (WHERE run_at <= now()))::int AS due,
                  (count(*) FILTER (WHERE run_at <= now() AND h.types IS NOT NULL AND type <> ALL (h.types)))::int AS due_unhandled,
                  (count(*) FILTER (WHERE run_at <= now() AND lease_lost_streak >= ${SUSPECT_STREAK} AND (h.types IS NULL OR type = ANY (h.types))))::int AS due_suspect,
                  extract(epoch FROM now() - min(run_at)) * 1000 AS oldest_ms
             FROM (${levelByLevel((level) => `SELECT run_at, status, type, lease_lost_streak FROM jobs WHERE queue = q.queue AND status IN ('queued', 'retrying') AND priority = ${level} ORDER BY run_at LIMIT $1`)}
                   ORDER BY run_at LIMIT $1) t
         ) w
        WHERE q.queue IS NOT NULL LIMIT ${QUEUES_MAX + 1}`,
      [DUE_CAP, opts.leaseMs],
    ),
    () => queueControls(db),
  ]);

  // ---- per status
  const counts = zero(0);
  const kinds = zero<CountKind>('exact');
  for (const st of JOB_STATUSES) if (!counted.includes(st)) counts[st] = COUNT_CAP; // past the cap, by the statistics
  for (const r of capped.rows) counts[r.status as JobStatus] = r.n;
  const big = JOB_STATUSES.filter((s) => counts[s] >= COUNT_CAP);
  const small = JOB_STATUSES.filter((s) => counts[s] < COUNT_CAP);
  if (big.length) {
    const exactSum = small.reduce((n, s) => n + counts[s], 0);
    const freqSum = big.reduce((n, s) => n + (statusFreq.get(s) ?? 0), 0);
    for (const s of big) {
      const f = statusFreq.get(s);
      if (live !== null && f !== undefined && freqSum > 0) {
        // A count that reached the cap is at least the cap; an uncounted status is only its
        // share of the live rows (which follow a purge at once, where the fractions lag).
        const share = Math.max(0, Math.round(((live - exactSum) * f) / freqSum));
        counts[s] = counted.includes(s) ? Math.max(COUNT_CAP, share) : share;
        kinds[s] = 'estimate';
      } else {
        kinds[s] = 'atLeast';
      }
    }
  }

  // ---- per queue and status
  // Exact for the small statuses, smallest first, while their rows stay under GROUP_CAP.
  const grouped: JobStatus[] = [];
  let rows = 0;
  for (const s of [...small].sort((x, y) => counts[x] - counts[y])) {
    if (rows + counts[s] > GROUP_CAP) break;
    grouped.push(s);
    rows += counts[s];
  }
  const groupedRows = grouped.length
    ? (
        // A branch per literal status, as above: a status list would read the whole table.
        await db.query(
          grouped.map((st) => `SELECT queue, '${st}'::text AS status, count(*)::int AS n FROM jobs WHERE status = '${st}' GROUP BY queue`).join('\n UNION ALL '),
        )
      ).rows
    : [];

  const queues = new Map<string, QueueStats>();
  const queueOf = (name: string) => {
    let q = queues.get(name);
    if (!q) {
      q = { queue: name, counts: zero(0), kinds: zero<CountKind>('exact'), due: 0, dueCapped: false, dueUnhandled: 0, dueSuspect: 0, oldestDueAgeMs: null, signalBacklog: null, controls: null, workersAlive: 0 };
      // A status with no jobs at all is exactly zero everywhere.
      for (const s of JOB_STATUSES) if (!grouped.includes(s) && counts[s] > 0) q.kinds[s] = 'estimate';
      queues.set(name, q);
    }
    return q;
  };
  for (const r of groupedRows) queueOf(r.queue).counts[r.status as JobStatus] = r.n;
  const queuesTruncated = waiting.rows.length > QUEUES_MAX;
  const waitingIn = new Map<string, Waiting>();
  for (const r of waiting.rows.slice(0, QUEUES_MAX)) {
    const q = queueOf(r.queue);
    waitingIn.set(r.queue, { queued: r.queued, retrying: r.retrying, capped: r.waiting >= DUE_CAP });
    q.due = r.due;
    q.dueCapped = r.due >= DUE_CAP;
    q.dueUnhandled = r.due_unhandled;
    q.dueSuspect = r.due_suspect;
    q.oldestDueAgeMs = r.oldest_ms !== null && Number(r.oldest_ms) >= 0 ? Math.round(Number(r.oldest_ms)) : null;
  }
  // Every queue a worker consumed within the hour is listed, with how many consume it now.
  for (const [q, alive] of Object.entries((misc.rows[0]?.worker_queues as Record<string, number> | null) ?? {})) queueOf(q).workersAlive = alive;
  for (const c of controls) queueOf(c.name).controls = c;

  // The statuses not counted per queue: share the status's count by (queue, status)
  // frequencies from the extended statistics, or by the queue's own frequency without them.
  const ungrouped = JOB_STATUSES.filter((s) => !grouped.includes(s) && counts[s] > 0);
  if (ungrouped.length) {
    const joint = new Map<JobStatus, Map<string, number>>();
    for (const r of extMcv.rows) {
      const s = r.status as JobStatus;
      if (!joint.has(s)) joint.set(s, new Map());
      joint.get(s)!.set(r.queue, Number(r.freq));
    }
    const queueFreq = new Map<string, number>();
    (b.queue_vals ?? []).forEach((v: string, k: number) => queueFreq.set(v, Number(b.queue_freqs[k])));
    const sharesOf = new Map(ungrouped.map((s) => [s, joint.get(s)?.size ? joint.get(s)! : queueFreq] as const));
    for (const [s, byQueue] of sharesOf) {
      const sum = [...byQueue.values()].reduce((n, f) => n + f, 0);
      if (sum <= 0) continue;
      // A listed pair's share of the status is its frequency over the status's own (without
      // joint statistics, the queue's over all rows), not over the listed ones' sum: the
      // statistics list only the commonest, and that sum handed the unlisted queues' jobs to
      // the listed ones (a queue holding 31 % of the failed jobs read as 40 %). Never below
      // the sum, so the shares never add up to more than the status.
      const whole = Math.max(sum, byQueue === queueFreq ? 1 : (statusFreq.get(s) ?? sum));
      for (const [name, f] of byQueue) {
        if (queues.size >= QUEUES_MAX && !queues.has(name)) continue;
        const q = queueOf(name);
        q.counts[s] = Math.round((counts[s] * f) / whole);
      }
    }
    // A queue the statistics do not name has no share: its count is unknown, not 0.
    for (const q of queues.values()) {
      for (const [s, byQueue] of sharesOf) if (!byQueue.has(q.queue)) q.kinds[s] = 'unknown';
    }
  }
  waitingCounts(queues, waitingIn, queuesTruncated, grouped);

  // ---- the wake-up signal: ids in Redis next to the due jobs in PostgreSQL
  const usingRedis = !!opts.doorbell?.usingRedis;
  const list = [...queues.values()].sort((x, y) => x.queue.localeCompare(y.queue)).slice(0, QUEUES_MAX);
  if (opts.doorbell) {
    await Promise.all(
      list.map(async (q) => {
        q.signalBacklog = await opts.doorbell!.backlog(q.queue);
      }),
    );
  }
  const m = misc.rows[0];
  // Over every queue: a stuck queue named after the first QUEUES_MAX must still show here.
  const oldest = queuesTruncated
    ? await oldestDueOfAll(db)
    : list.reduce<number | null>((o, q) => (q.oldestDueAgeMs !== null && (o === null || q.oldestDueAgeMs > o) ? q.oldestDueAgeMs : o), null);
  const kindsUsed = new Set(Object.values(kinds));
  return {
    computedAt: m.db_now,
    computeMs: Math.round(performance.now() - t0),
    counts,
    kinds,
    total: JOB_STATUSES.reduce((n, s) => n + counts[s], 0),
    totalKind: kindsUsed.has('estimate') ? 'estimate' : kindsUsed.has('atLeast') ? 'atLeast' : 'exact',
    estimates: { analyzedAt: b.analyzed_at ?? null, liveRows: live === null ? null : Math.round(live), countCap: COUNT_CAP },
    queues: list,
    queuesTruncated,
    oldestQueuedAgeMs: oldest,
    runningExpired: m.expired,
    workersAlive: m.alive,
    workersStale: m.stale,
    schedulesFailing: m.schedules_failing,
    schedulesSkipping: m.schedules_skipping,
    sweptAgoMs: m.swept_ago_ms === null || m.swept_ago_ms === undefined ? null : Math.max(0, Math.round(Number(m.swept_ago_ms))),
    sweepStaleAfterMs: sweepStaleAfterMs(opts.recoverMs ?? RECOVER_INTERVAL_MS_DEFAULT),
    signal: {
      usingRedis,
      redisConfigured: !!opts.doorbell?.redisConfigured,
      due: list.reduce((n, q) => n + q.due, 0),
      backlog: usingRedis ? list.reduce((n, q) => n + (q.signalBacklog ?? 0), 0) : null,
    },
    database: databaseHealth(m.oldest_xact, b.dead, m.xid_age),
    workerTotals: totalsOf(m.totals ?? {}),
    dbNow: m.db_now,
  };
}

/** A queue's waiting jobs by status, as one statement read them (capped at DUE_CAP in all). */
interface Waiting {
  queued: number;
  retrying: number;
  capped: boolean;
}

/**
 * A queue's queued and retrying counts from its waiting jobs, read together in one
 * statement (exact below DUE_CAP), where the statuses are too large to count per queue:
 * never a share of the statistics, which know nothing of a queue filled since the last
 * ANALYZE. The waiting scan visits every queue that has any, so a queue it did not list
 * (the list not cut) has none of the statuses counted only that way.
 */
function waitingCounts(queues: Map<string, QueueStats>, waitingIn: Map<string, Waiting>, truncated: boolean, grouped: JobStatus[]) {
  for (const q of queues.values()) {
    const w = waitingIn.get(q.queue);
    for (const s of ['queued', 'retrying'] as const) {
      if (!w) {
        // A grouped count stands (read by its own statement, it may be newer).
        if (!truncated && !grouped.includes(s)) [q.counts[s], q.kinds[s]] = [0, 'exact'];
      } else if (!w.capped) {
        [q.counts[s], q.kinds[s]] = [w[s], 'exact'];
      } else if (!grouped.includes(s) && !(q.kinds[s] === 'estimate' && q.counts[s] > w[s])) {
        // Past the cap what was read is a floor; the statistics' share stands when it is more.
        [q.counts[s], q.kinds[s]] = [w[s], 'atLeast'];
      }
    }
  }
}

/** The oldest due job's age over every queue (one probe per queue with waiting jobs). */
async function oldestDueOfAll(db: Executor): Promise<number | null> {
  const { rows } = await db.query(
    `WITH RECURSIVE ${WAITING_QUEUES}
     SELECT max((SELECT extract(epoch FROM now() - min(run_at)) * 1000
                   FROM (${levelByLevel((level) => `SELECT run_at FROM jobs WHERE queue = q.queue AND status IN ('queued', 'retrying') AND priority = ${level} AND run_at <= now() ORDER BY run_at LIMIT 1`)}) c)) AS oldest_ms
       FROM q WHERE q.queue IS NOT NULL`,
  );
  const v = rows[0]?.oldest_ms;
  return v === null || v === undefined ? null : Math.round(Number(v));
}


/**
 * The statements one after another: the stats run on one connection, which would run them
 * in turn anyway, and node-postgres is retiring overlapping queries on one client.
 */
async function inTurn<const T extends readonly (() => Promise<unknown>)[]>(steps: T): Promise<{ -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> }> {
  const out: unknown[] = [];
  for (const step of steps) out.push(await step());
  return out as { -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> };
}
