/**
 * One stats computation per console process, shared by every viewer (riverui's
 * querycacher). A request is answered from the last snapshot at once; when that snapshot
 * is older than the refresh interval, one computation starts in the background
 * (stale-while-revalidate), so no viewer waits for the database while workers keep it
 * busy — the overview shows each snapshot's age. Nothing is computed while nobody looks
 * (but once when the console starts: lib/server/context.ts warmUpStats), so the first viewer
 * after a quiet spell is answered from the snapshot the last one saw (up to
 * MAX_IDLE_STALE_MS old, its age shown) while the fresh one is computed; the live feed
 * brings that a second later. A viewer waits for the computation only when there is no
 * snapshot, when the snapshot is older than MAX_IDLE_STALE_MS, or when the last refresh
 * failed and the snapshot is older than MAX_STALE_MS and three intervals (the database
 * stopped answering: its error should show, not an ever older snapshot). The interval is
 * at least MIN_REFRESH_MS and grows with the computation's own cost (10x), so a slow
 * database is never asked more than about a tenth of the time.
 *
 * Throughput and failure rates come from the workers' cumulative counters (the workers
 * table, a handful of rows), sampled every SAMPLE_MS while the console runs and kept in
 * memory for HISTORY_MS; the charts start when the console process starts. The dead-letter
 * series is the exception: counted from the failed jobs themselves with each sample
 * (readDeadLettered), since a worker killed mid-burst takes its last counts with it.
 */
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { computeConsoleStats, type ConsoleStats, readWorkerTotals, type WorkerTotals } from './console-stats';
import { readDeadLettered, readLeasesLost } from './failure-series';
import { type Executor, useConnection } from '../db/client';
import { readLostLeases, readTypeTotals, typeWindow, type TypeTotals, type TypeWindowRow, withLostLeases } from './type-metrics';
import { log } from '../log';
import type { Doorbell } from './signal';

export const MIN_REFRESH_MS = 2_000;
/** The oldest snapshot served without waiting once a refresh has failed. */
export const MAX_STALE_MS = 10_000;
/** The oldest snapshot served without waiting while refreshes succeed (nobody looked for a while). */
export const MAX_IDLE_STALE_MS = 5 * 60_000;
export const SAMPLE_MS = 5_000;
export const BUCKET_MS = 10_000;
/** The time each throughput point's rate is over: three buckets, three default heartbeats (lease / 3). */
export const RATE_WINDOW_MS = 30_000;
export const HISTORY_MS = 60 * 60_000;
/** The overview's "Job types" table: what each queue and type did over the last this long. */
export const TYPES_WINDOW_MS = 15 * 60_000;
/**
 * The per-type totals are read at most this often, and never more than a twentieth of the
 * time: their read walks every worker row's list of types (1.8 s at 10,000 worker rows of 20
 * types each, where the counters take milliseconds), and a 15-minute window needs no more.
 */
export const TYPES_MIN_SAMPLE_MS = 10_000;

interface Sample {
  at: number;
  totals: WorkerTotals;
}

interface TypeSample {
  at: number;
  byType: TypeTotals[];
}

export interface RatePoint {
  /** Bucket start (ms since epoch, database clock). */
  t: number;
  /** Jobs per second in the bucket. */
  claimed: number;
  completed: number;
  /** Jobs that entered the dead letter (and are still there), by their failure time: from the jobs table. */
  failed: number;
  retried: number;
  /** Leases workers found lost (the worker survived: a stall, a partition). */
  leaseLost: number;
  /** Jobs moved on from a lost lease, by a sweep or a peer's takeover (crashes too). */
  recovered: number;
}

export interface StatsSnapshot extends ConsoleStats {
  throughput: { bucketMs: number; since: Date | null; points: RatePoint[] };
  /**
   * Per queue and job type, what ended between two samples of the workers' totals: the
   * earliest within TYPES_WINDOW_MS of the latest (`since`), and the latest (`until`). Null
   * bounds until there are two samples (the console process just started).
   */
  types: { windowMs: number; since: Date | null; until: Date | null; rows: TypeWindowRow[] };
  refreshMs: number;
  /** The last refresh failed: this snapshot is served on while the database is away (the console then does not count it as a fresh answer). */
  refreshFailing: boolean;
}

/** A stats computation, for the snapshot generation it began in (see invalidate). */
interface Flight {
  generation: number;
  promise: Promise<ConsoleStats>;
}

export class StatsCache {
  /**
   * The last snapshot; `at` is performance.now() when it was read. Not the wall clock: one
   * stepped back an hour made every snapshot look newer than now, served for that hour.
   */
  private last: { at: number; stats: ConsoleStats; generation: number } | null = null;
  private inFlight: Flight | null = null;
  /** A computation waiting for a running one to end (see refresh). */
  private pending: Flight | null = null;
  private running = 0;
  /** Bumped by invalidate(): a snapshot (or a computation) of an older generation may predate a change. */
  private generation = 0;
  /** The last refresh failed: the database may be away, so a stale snapshot is served briefly only. */
  private failing = false;
  private refreshMs: number;
  private samples: Sample[] = [];
  /** Jobs in the dead letter and leases lost per bucket (readEndedSeries), as of the last sample. */
  private ended: EndedSeries | null = null;
  private sampler: NodeJS.Timeout | null = null;

  /** Per-type samples (sampleTypes), the last TYPES_WINDOW_MS of them. */
  private typeSamples: TypeSample[] = [];
  private nextTypeSampleAt = 0;
  private typesBusy = false;
  /** The leases lost within the types window as it stood at the last sample (readLostLeases); null until read. */
  private lostLeases: { since: number; until: number; byKind: Awaited<ReturnType<typeof readLostLeases>> } | null = null;

  constructor(
    private readonly db: pg.Pool,
    private readonly opts: {
      doorbell?: Doorbell | null;
      leaseMs: number;
      recoverMs?: number;
      minRefreshMs?: number;
      maxStaleMs?: number;
      /** Tests: the least time between two per-type samples (TYPES_MIN_SAMPLE_MS). */
      typesMinSampleMs?: number;
    },
  ) {
    this.refreshMs = this.minRefreshMs;
  }

  private get minRefreshMs() {
    return this.opts.minRefreshMs ?? MIN_REFRESH_MS;
  }

  /**
   * The snapshot may predate a change this process just made (an operator paused a queue,
   * requeued jobs): the next get() waits for a computation started after this call, so
   * the page that made the change sees it, not the old numbers until the interval passes.
   */
  invalidate() {
    this.generation++;
  }

  async get(): Promise<StatsSnapshot> {
    this.startSampler();
    const age0 = this.last ? performance.now() - this.last.at : Infinity;
    const invalidated = !!this.last && this.last.generation < this.generation;
    let stats: ConsoleStats;
    if (age0 < this.refreshMs && !invalidated) stats = this.last!.stats;
    else {
      // A computation already running is joined only if it began after the last invalidate().
      const next = this.inFlight?.generation === this.generation ? this.inFlight.promise : this.refresh();
      const servable = Math.max(this.failing ? (this.opts.maxStaleMs ?? MAX_STALE_MS) : MAX_IDLE_STALE_MS, this.refreshMs * 3);
      if (age0 < servable && !invalidated) {
        // Served stale meanwhile; a failure is logged (and the next viewer past MAX_STALE_MS sees it).
        next.catch((err) => log.warn('the overview stats could not be refreshed; serving the last snapshot', { err }));
        stats = this.last!.stats;
      } else stats = await next;
    }
    // dbNow is "now" on the database clock: the snapshot's time plus what elapsed since.
    const age = this.last?.stats === stats ? Math.max(0, performance.now() - this.last.at) : 0;
    return { ...stats, dbNow: new Date(stats.computedAt.getTime() + age), throughput: this.rates(), types: this.types(), refreshMs: this.refreshMs, refreshFailing: this.failing };
  }

  /**
   * Starts a computation for the current generation — at most two run at once (one may have
   * begun before an invalidate() and be superseded). Past that, one more waits for the
   * newest to end, and every viewer meanwhile joins it: operator actions in quick succession
   * cannot pile computations up on the read pool.
   */
  private refresh(): Promise<ConsoleStats> {
    if (this.pending) {
      // Not begun yet: it begins after every invalidate() so far.
      this.pending.generation = this.generation;
      return this.pending.promise;
    }
    const flight: Flight = { generation: this.generation, promise: null! };
    const begin = () => {
      if (this.pending === flight) this.pending = null;
      this.running++;
      return this.compute(flight.generation).finally(() => this.running--);
    };
    if (this.running < 2) flight.promise = begin();
    else {
      this.pending = flight;
      flight.promise = this.inFlight!.promise.then(begin, begin);
    }
    this.inFlight = flight;
    // Only this computation's own slot is cleared: a newer one may have replaced it.
    const done = () => {
      if (this.inFlight === flight) this.inFlight = null;
    };
    flight.promise.then(done, done);
    return flight.promise;
  }

  private async compute(generation: number): Promise<ConsoleStats> {
    try {
      // On one connection, its statements one after another: the computation never takes
      // more than one of the read pool's connections from the pages viewers are loading.
      // Its cost is timed from the connection in hand: the wait for one (a connection opened
      // while the console starts up, a busy pool) is not the database's time, and counted in
      // it made the start's first snapshot (6 s to get a connection, 0.3 s of statements) the
      // overview's numbers for a whole minute.
      let tookMs = 0;
      const [stats, ended] = await useConnection(this.db, async (client) => {
        const t0 = performance.now();
        const stats = await computeConsoleStats(client, this.opts);
        const out = [stats, await readEndedSeries(client, stats.dbNow.getTime())] as const;
        tookMs = performance.now() - t0;
        return out;
      });
      // An older computation finishing after a newer one must not put its numbers back.
      if (!this.last || this.last.generation <= generation) this.last = { at: performance.now(), stats, generation };
      this.failing = false;
      this.refreshMs = Math.max(this.minRefreshMs, Math.round(tookMs) * 10);
      this.ended = ended;
      this.addSample(stats.dbNow.getTime(), stats.workerTotals);
      return stats;
    } catch (err) {
      this.failing = true;
      throw err;
    }
  }

  private startSampler() {
    if (this.sampler) return;
    // The dead-letter and lease-lost series are read with each sample (here and with each
    // snapshot): a bucket a sample opens has its failures counted too, not 0 until the next
    // snapshot. Up to the sample's time, so the newest bucket's count and width agree. One
    // tick at a time: on a saturated pool, ticks must not pile up behind each other.
    let ticking = false;
    const tick = () => {
      if (ticking) return;
      ticking = true;
      readWorkerTotals(this.db)
        .then(async (r) => {
          this.ended = await readEndedSeries(this.db, r.dbNow.getTime());
          this.addSample(r.dbNow.getTime(), r.totals);
          void this.sampleTypes(r.dbNow.getTime());
        })
        .catch(() => {}) // the next tick tries again; the overview shows its own errors
        .finally(() => (ticking = false));
    };
    void tick();
    this.sampler = setInterval(tick, SAMPLE_MS);
    this.sampler.unref();
  }

  private addSample(at: number, totals: WorkerTotals) {
    const lastAt = this.samples[this.samples.length - 1]?.at ?? 0;
    if (at - lastAt < 1_000) return;
    this.samples.push({ at, totals });
    while (this.samples.length && this.samples[0]!.at < at - HISTORY_MS) this.samples.shift();
  }

  /**
   * A per-type sample, when TYPES_MIN_SAMPLE_MS (and twenty times the last read's cost) have
   * passed; `at` is the database clock of the counters read with it. One at a time.
   */
  private async sampleTypes(at: number) {
    if (this.typesBusy || performance.now() < this.nextTypeSampleAt) return;
    this.typesBusy = true;
    try {
      const t0 = performance.now();
      const byType = await readTypeTotals(this.db);
      const cost = performance.now() - t0;
      this.nextTypeSampleAt = performance.now() + Math.max(this.opts.typesMinSampleMs ?? TYPES_MIN_SAMPLE_MS, 20 * cost);
      this.typeSamples.push({ at, byType });
      while (this.typeSamples.length > 1 && this.typeSamples[1]!.at <= at - TYPES_WINDOW_MS) this.typeSamples.shift();
      const w = this.typesWindow();
      if (w) this.lostLeases = { since: w.earliest.at, until: w.latest.at, byKind: await readLostLeases(this.db, new Date(w.earliest.at), new Date(w.latest.at)) };
    } catch {
      // The next tick tries again.
    } finally {
      this.typesBusy = false;
    }
  }

  /** What each queue and type did between the earliest per-type sample within the window and the latest. */
  private types(): StatsSnapshot['types'] {
    const w = this.typesWindow();
    if (!w) return { windowMs: TYPES_WINDOW_MS, since: null, until: null, rows: [] };
    const { earliest, latest } = w;
    const rows = typeWindow(earliest.byType, latest.byType);
    // The lost leases as the attempts record them, when read for this very window (a read
    // that failed leaves the workers' own counts).
    const lost = this.lostLeases?.since === earliest.at && this.lostLeases.until === latest.at ? this.lostLeases.byKind : null;
    return { windowMs: TYPES_WINDOW_MS, since: new Date(earliest.at), until: new Date(latest.at), rows: lost ? withLostLeases(rows, lost) : rows };
  }

  /** The types window: the earliest per-type sample within TYPES_WINDOW_MS of the latest, and the latest; null with fewer than two. */
  private typesWindow() {
    const latest = this.typeSamples[this.typeSamples.length - 1];
    const earliest = latest && this.typeSamples.find((s) => s.at >= latest.at - TYPES_WINDOW_MS);
    return latest && earliest && earliest !== latest ? { earliest, latest } : null;
  }

  private rates(): StatsSnapshot['throughput'] {
    return throughputOf(this.samples, this.ended);
  }

  stop() {
    if (this.sampler) clearInterval(this.sampler);
    this.sampler = null;
  }
}

/** Per bucket of the charts, read from the rows themselves: jobs dead-lettered, and leases lost. */
export interface EndedSeries {
  deadLettered: Map<number, number>;
  leasesLost: Map<number, number>;
  /** The end of their window (database clock, ms): they count what ended in the HISTORY_MS up to it. */
  at: number;
}

/** Both series of the failure chart that the database, not the workers' counters, holds; one statement after the other. */
async function readEndedSeries(db: Executor, at: number): Promise<EndedSeries> {
  return { deadLettered: await readDeadLettered(db, BUCKET_MS, HISTORY_MS, at), leasesLost: await readLeasesLost(db, BUCKET_MS, HISTORY_MS, at), at };
}

/**
 * Rates per BUCKET_MS bucket: each bucket's rate is over the RATE_WINDOW_MS that end with it
 * (the last one's at the latest sample; the oldest ones', the first window's), the counters
 * read between samples as growing evenly. Workers report their counters only with their heartbeats (every 10 s by default,
 * one bucket): from the samples in a bucket alone, a steady 50 jobs/s drew 50, 100, 0, 50,
 * as heartbeats fell on either side of a bucket's edge, and a minute the sampler missed came
 * out as one spike. A counter that went down (a pruned worker row) counts as not moving.
 */
export function throughputOf(samples: readonly { at: number; totals: WorkerTotals }[], ended: EndedSeries | null): StatsSnapshot['throughput'] {
  const keys = ['claimed', 'completed', 'failed', 'retried', 'leaseLost', 'recovered'] as const;
  const since = samples[0] ? new Date(samples[0].at) : null;
  if (samples.length < 2) return { bucketMs: BUCKET_MS, since, points: [] };
  // Each counter summed up over the samples, never going down.
  const grown = samples.map(() => ({}) as Record<(typeof keys)[number], number>);
  for (const key of keys) grown[0]![key] = 0;
  for (let k = 1; k < samples.length; k++) {
    for (const key of keys) grown[k]![key] = grown[k - 1]![key] + Math.max(0, samples[k]!.totals[key] - samples[k - 1]!.totals[key]);
  }
  // A counter at time `at` (within the samples), between two samples in proportion.
  let k = 0;
  const valueAt = (key: (typeof keys)[number], at: number) => {
    while (k > 0 && samples[k]!.at > at) k--;
    while (k < samples.length - 2 && samples[k + 1]!.at < at) k++;
    const [a, b] = [samples[k]!, samples[k + 1]!];
    const share = b.at > a.at ? Math.min(1, Math.max(0, (at - a.at) / (b.at - a.at))) : 1;
    return grown[k]![key] + (grown[k + 1]![key] - grown[k]![key]) * share;
  };
  const first = samples[0]!.at;
  const last = samples[samples.length - 1]!.at;
  const points: RatePoint[] = [];
  for (let t = Math.floor(first / BUCKET_MS) * BUCKET_MS; t < last; t += BUCKET_MS) {
    let end = Math.min(t + BUCKET_MS, last);
    let start = end - RATE_WINDOW_MS;
    // A whole window always (while the samples span one): the oldest buckets, whose windows the
    // first sample cuts short, take the first window's rate instead; cut short, a second or two
    // held a heartbeat's report (a steady 50 jobs/s drew as 500).
    if (start < first) [start, end] = [first, Math.min(first + RATE_WINDOW_MS, last)];
    if (end - start < 1_000) continue;
    const p: RatePoint = { t, claimed: 0, completed: 0, failed: 0, retried: 0, leaseLost: 0, recovered: 0 };
    for (const key of keys) p[key] = Number(((valueAt(key, end) - valueAt(key, start)) / ((end - start) / 1000)).toPrecision(3));
    points.push(p);
  }
  // The dead letter's own count per bucket (failures no worker counted: its process killed),
  // and the attempt history's lost leases (recoveries no worker lived to report). Each over
  // the part of its bucket the read covers: the newest has only begun (3 failures in its
  // first second read as 0.3 a second over the whole 10 s, not 3), and the window's start
  // may cut into the oldest.
  if (ended) {
    const perSecond = (series: Map<number, number>, t: number) => {
      const coveredMs = Math.min(t + BUCKET_MS, ended.at) - Math.max(t, ended.at - HISTORY_MS);
      return Number(((series.get(t) ?? 0) / (Math.max(coveredMs, 1_000) / 1000)).toPrecision(3));
    };
    for (const p of points) {
      p.failed = perSecond(ended.deadLettered, p.t);
      p.recovered = perSecond(ended.leasesLost, p.t);
    }
  }
  return { bucketMs: BUCKET_MS, since, points };
}
