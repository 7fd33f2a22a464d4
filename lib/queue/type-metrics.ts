/**
 * Figures per job type (and queue): how many attempts ended each way and how long their
 * handlers ran. Operators ask "which job is failing, which got slow" (Sidekiq's Metrics tab,
 * Oban's per-worker charts); the process-wide counters cannot say.
 *
 * Each worker process keeps a TypeTally and reports its snapshot with every heartbeat, in
 * its `workers.metrics` row under `byType` (a list, one entry per queue and type it ran);
 * readTypeTotals sums them over every worker row, like the other counters (so they survive
 * restarts; a SIGKILLed process loses what happened since its last heartbeat). /api/metrics
 * exposes the sums as labelled series, and the console's stats cache turns two of its samples
 * into the overview's "Job types" table (typeWindow).
 *
 * The entries are bounded by configuration: a worker runs only the types it has handlers
 * for, on the queues it consumes.
 */
import type { Executor } from '../db/client';
import { DURATION_BUCKETS_MS, Histogram, type HistogramSnapshot } from './histogram';
import { WORKER_METRICS } from './worker-totals';

/**
 * How an attempt ended, as counted per type: retried and failed (to the dead letter) are both
 * failed attempts; snoozed (put off by its handler) is none; leaseLost is an attempt whose
 * lease ran out (its worker killed, stalled or cut off), counted by the worker whose sweep or
 * claim moved the job on — which type keeps taking its workers down.
 */
export const TYPE_OUTCOMES = ['completed', 'retried', 'failed', 'cancelled', 'snoozed', 'leaseLost'] as const;
export type TypeOutcome = (typeof TYPE_OUTCOMES)[number];

export interface JobKind {
  queue: string;
  type: string;
}

/** One queue and type's totals: the counts of attempts ended each way, and the handlers' run time. */
export interface TypeTotals extends JobKind, Record<TypeOutcome, number> {
  runTimeMs: HistogramSnapshot;
}

const kindKey = (k: JobKind) => `${k.queue}\u0000${k.type}`;

type TallyEntry = JobKind & Record<TypeOutcome, number> & { runTime: Histogram };

/** A worker process's figures per queue and type, since it started. */
export class TypeTally {
  private readonly byKind = new Map<string, TallyEntry>();
  /** The entry used last: a drain's jobs are mostly of one kind, and this is on every job's path. */
  private last: TallyEntry | null = null;

  private entry(k: JobKind) {
    if (this.last && this.last.type === k.type && this.last.queue === k.queue) return this.last;
    const key = kindKey(k);
    let e = this.byKind.get(key);
    if (!e) {
      e = { queue: k.queue, type: k.type, completed: 0, retried: 0, failed: 0, cancelled: 0, snoozed: 0, leaseLost: 0, runTime: new Histogram() };
      this.byKind.set(key, e);
    }
    return (this.last = e);
  }

  count(k: JobKind, outcome: TypeOutcome, n = 1) {
    this.entry(k)[outcome] += n;
  }

  observeRunTime(k: JobKind, ms: number) {
    this.entry(k).runTime.observe(ms);
  }

  snapshot(): TypeTotals[] {
    return [...this.byKind.values()].map(({ runTime, ...e }) => ({ ...e, runTimeMs: runTime.snapshot() }));
  }
}

/** The `byType` entries of every worker row that are well formed (a malformed one adds nothing). */
const ENTRIES = `
  SELECT e FROM ${WORKER_METRICS} w
   CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(w.metrics -> 'byType') = 'array' THEN w.metrics -> 'byType' ELSE '[]'::jsonb END) AS e
   WHERE jsonb_typeof(e) = 'object' AND jsonb_typeof(e -> 'queue') = 'string' AND jsonb_typeof(e -> 'type') = 'string'`;
const sumOf = (path: string) => `coalesce(sum(CASE WHEN jsonb_typeof(e #> '{${path}}') = 'number' THEN (e #>> '{${path}}')::numeric END), 0)`;

const TOTALS_SQL = `
  WITH entries AS (${ENTRIES})
  SELECT e ->> 'queue' AS queue, e ->> 'type' AS type,
         ${TYPE_OUTCOMES.map((o) => `${sumOf(o)} AS "${o}"`).join(', ')},
         ${sumOf('runTimeMs,sum')} AS run_sum, ${sumOf('runTimeMs,count')} AS run_count
    FROM entries GROUP BY 1, 2 ORDER BY 1, 2`;

const BUCKETS_SQL = `
  WITH entries AS (${ENTRIES})
  SELECT e ->> 'queue' AS queue, e ->> 'type' AS type, b.ord::int AS ord, sum(b.n::numeric) AS n
    FROM entries
   CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(e #> '{runTimeMs,counts}') = 'array' THEN e #> '{runTimeMs,counts}' ELSE '[]'::jsonb END)
         WITH ORDINALITY AS b(n, ord)
   WHERE jsonb_typeof(b.n) = 'number'
   GROUP BY 1, 2, 3`;

/**
 * A sum as a count: a malformed row's negative numbers (no worker writes one) can leave it
 * below 0, or past what a double holds: read as 0, as prom-client's counters refuse both
 * (throwing, which fails all of /api/metrics). Checked here, not per JSON element in SQL,
 * which doubled the statements' time on 10,000 worker rows.
 */
const total = (v: unknown) => {
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? n : 0;
};

/** Every queue and type's totals, summed over all worker rows (every incarnation). Two statements, run one after the other. */
export async function readTypeTotals(db: Executor): Promise<TypeTotals[]> {
  const totals = await db.query(TOTALS_SQL);
  const buckets = await db.query(BUCKETS_SQL);
  const out = new Map<string, TypeTotals>();
  for (const r of totals.rows) {
    out.set(kindKey(r), {
      queue: r.queue,
      type: r.type,
      completed: total(r.completed),
      retried: total(r.retried),
      failed: total(r.failed),
      cancelled: total(r.cancelled),
      snoozed: total(r.snoozed),
      leaseLost: total(r.leaseLost),
      runTimeMs: { counts: new Array<number>(DURATION_BUCKETS_MS.length + 1).fill(0), sum: total(r.run_sum), count: total(r.run_count) },
    });
  }
  for (const r of buckets.rows) {
    const t = out.get(kindKey(r));
    // A row written with another bucket layout (an older version): its extra entries count as above every bound.
    if (t) t.runTimeMs.counts[Math.min(r.ord - 1, DURATION_BUCKETS_MS.length)]! += total(r.n);
  }
  return [...out.values()];
}

/**
 * The q-quantile of a bucketed histogram (counts per bucket, not cumulative), interpolated
 * linearly within its bucket as Prometheus's histogram_quantile does; null when empty. Past
 * the last bound it is that bound (the histogram knows no more).
 */
export function histogramQuantile(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total <= 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let k = 0; k < counts.length; k++) {
    const n = counts[k]!;
    if (n > 0 && seen + n >= rank) {
      if (k >= DURATION_BUCKETS_MS.length) return DURATION_BUCKETS_MS[DURATION_BUCKETS_MS.length - 1]!;
      const lower = k === 0 ? 0 : DURATION_BUCKETS_MS[k - 1]!;
      const upper = DURATION_BUCKETS_MS[k]!;
      return lower + (upper - lower) * ((rank - seen) / n);
    }
    seen += n;
  }
  return DURATION_BUCKETS_MS[DURATION_BUCKETS_MS.length - 1]!;
}

/** One row of the overview's "Job types" table: what happened in a window, from two samples of the totals. */
export interface TypeWindowRow extends JobKind, Record<TypeOutcome, number> {
  /** Handler runs that ended in the window (every outcome, and attempts whose lease was lost meanwhile). */
  runs: number;
  /** Run time quantiles (ms) of those runs; null with none. */
  runP50Ms: number | null;
  runP95Ms: number | null;
  runMeanMs: number | null;
  /**
   * Runs longer than the histogram's top bound (1 h): a quantile among them is only "more
   * than" that bound (histogramQuantile answers the bound itself).
   */
  runsPastTop: number;
}

/**
 * What happened between two samples of the totals, per queue and type: the later minus the
 * earlier (never below 0). Kinds with nothing in the window are left out; the busiest come first.
 */
export function typeWindow(earlier: readonly TypeTotals[], later: readonly TypeTotals[]): TypeWindowRow[] {
  const before = new Map(earlier.map((t) => [kindKey(t), t]));
  const rows: TypeWindowRow[] = [];
  for (const t of later) {
    const b = before.get(kindKey(t));
    // A sum that went down (worker rows deleted by hand) counts as nothing: the deleted rows'
    // totals are gone from it, and counting the whole sum instead would report every attempt
    // ever made as made in the window. As the throughput rates count it.
    // A figure missing from a sample (one recorded before its outcome was counted) is 0.
    const diff = (now: number | undefined, then: number | undefined) => Math.max(0, (now ?? 0) - (then ?? 0));
    const counts = t.runTimeMs.counts.map((n, k) => diff(n, b?.runTimeMs.counts[k]));
    const runs = diff(t.runTimeMs.count, b?.runTimeMs.count);
    const sum = diff(t.runTimeMs.sum, b?.runTimeMs.sum);
    const row: TypeWindowRow = {
      queue: t.queue,
      type: t.type,
      completed: diff(t.completed, b?.completed),
      retried: diff(t.retried, b?.retried),
      failed: diff(t.failed, b?.failed),
      cancelled: diff(t.cancelled, b?.cancelled),
      snoozed: diff(t.snoozed, b?.snoozed),
      leaseLost: diff(t.leaseLost, b?.leaseLost),
      runs,
      runP50Ms: histogramQuantile(counts, 0.5),
      runP95Ms: histogramQuantile(counts, 0.95),
      runMeanMs: runs > 0 ? sum / runs : null,
      runsPastTop: counts[DURATION_BUCKETS_MS.length] ?? 0,
    };
    if (row.runs + row.completed + row.retried + row.failed + row.cancelled + row.leaseLost > 0) rows.push(row);
  }
  return rows.sort(busiestFirst);
}

const ended = (r: TypeWindowRow) => r.completed + r.retried + r.failed + r.cancelled + r.leaseLost;
const busiestFirst = (x: TypeWindowRow, y: TypeWindowRow) => ended(y) - ended(x) || x.queue.localeCompare(y.queue) || x.type.localeCompare(y.type);

/**
 * The leases lost between two moments of the database clock (since, until], per queue and
 * type, from the attempts themselves (ended_attempts_lost_at_idx): the workers' counters lose
 * what a process counted and was then killed before its next heartbeat — and a poison job
 * kills the very worker that took it over, which had just counted the loss.
 */
export async function readLostLeases(db: Executor, since: Date, until: Date): Promise<Map<string, JobKind & { n: number }>> {
  // Each job looked up by its key (LATERAL … LIMIT 1 keeps the planner from joining by hash,
  // which read the whole jobs table for 5,000 lost leases: plans.db.test.ts).
  const { rows } = await db.query(
    `SELECT j.queue, j.type, count(*)::int AS n
       FROM ended_attempts a
       CROSS JOIN LATERAL (SELECT queue, type FROM jobs WHERE jobs.job_id = a.job_id LIMIT 1) j
      WHERE a.outcome = 'lease_lost' AND a.finished_at > $1 AND a.finished_at <= $2
      GROUP BY j.queue, j.type`,
    [since, until],
  );
  return new Map(rows.map((r) => [kindKey(r), { queue: r.queue, type: r.type, n: r.n }]));
}

/**
 * A window's rows with their lost leases as the attempts record them (readLostLeases), not
 * as the workers counted them; a kind whose only news is a lost lease gets a row of its own.
 */
export function withLostLeases(rows: readonly TypeWindowRow[], lost: ReadonlyMap<string, JobKind & { n: number }>): TypeWindowRow[] {
  const out = rows.map((r) => ({ ...r, leaseLost: lost.get(kindKey(r))?.n ?? 0 }));
  const seen = new Set(rows.map(kindKey));
  for (const [key, k] of lost) {
    if (seen.has(key)) continue;
    out.push({ queue: k.queue, type: k.type, completed: 0, retried: 0, failed: 0, cancelled: 0, snoozed: 0, leaseLost: k.n, runs: 0, runP50Ms: null, runP95Ms: null, runMeanMs: null, runsPastTop: 0 });
  }
  return out.filter((r) => r.runs + ended(r) > 0).sort(busiestFirst);
}
