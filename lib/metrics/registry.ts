/**
 * The Prometheus registry behind GET /api/metrics (prom-client). Every queue metric is
 * computed at scrape time from a MetricsSource (see source.ts); the console process's own
 * default metrics (CPU, memory, event loop lag, GC) come from prom-client.
 *
 * Names: leasehold_* for the queue, the prom-client defaults unprefixed as usual.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { DURATION_BUCKETS_MS } from '../queue/histogram';
import { JOB_STATUSES } from '../queue/status';
import { TYPE_OUTCOMES } from '../queue/type-metrics';
import type { WorkerCounter } from '../queue/worker-totals';
import { type MetricsSource, type SummedHistogram, type WorkerHistogram } from './source';

/** Summed from the worker rows like the rest, but exposed with the console's own (leasehold_signal_notify_fallbacks_total). */
const COUNTERS: Record<Exclude<WorkerCounter, 'notifyFallbacks'>, [name: string, help: string]> = {
  claimed: ['leasehold_jobs_claimed_total', 'Claims (leases taken) by worker processes, summed over all worker incarnations.'],
  completed: ['leasehold_jobs_completed_total', 'Completions accepted (fenced writes that matched the lease).'],
  failed: ['leasehold_jobs_failed_total', 'Jobs moved to failed (the dead letter) by a worker.'],
  retried: ['leasehold_jobs_retried_total', 'Failed attempts that left the job retrying with a backoff.'],
  cancelled: ['leasehold_jobs_cancelled_total', 'Running jobs that stopped after an operator cancel.'],
  snoozed: ['leasehold_jobs_snoozed_total', 'Attempts a handler put off (SnoozeError): the job queued for later, the attempt given back.'],
  leaseLost: ['leasehold_leases_lost_total', 'Leases a worker found taken over or expired (its handler was aborted).'],
  refusedWrites: ['leasehold_refused_writes_total', 'Fenced writes refused because the lease was no longer the writer\'s.'],
  recovered: ['leasehold_jobs_recovered_total', 'Expired leases moved on by workers: by their recover sweep, or taken over by a claim (a dead or stalled worker\'s jobs). An operator\'s Recover is in the audit log.'],
  resignalled: ['leasehold_jobs_resignalled_total', 'Due jobs whose signal was missing, rung again by the recover sweep.'],
  pruned: ['leasehold_jobs_pruned_total', 'Finished jobs the recover sweep deleted past their retention window (LEASEHOLD_KEEP_*_MS).'],
};

const HISTOGRAMS: Record<WorkerHistogram, [name: string, help: string]> = {
  queueWaitMs: ['leasehold_job_queue_wait_seconds', 'Time from due (run_at) to claim, database clock.'],
  runTimeMs: ['leasehold_job_run_seconds', 'Handler run time per attempt.'],
};

/** Bucket upper bounds in seconds, as Prometheus wants them. */
export const BUCKETS_SECONDS = DURATION_BUCKETS_MS.map((ms) => ms / 1000);

/**
 * A histogram whose buckets are not observed here but summed from the worker rows:
 * prom-client's registry formats it; getForPromString() (what the registry reads) supplies
 * the cumulative `le` buckets, the sum in seconds and the count.
 */
class SummedHistogramMetric extends Histogram<string> {
  constructor(
    private readonly metricName: string,
    private readonly metricHelp: string,
    registry: Registry,
    /** One histogram per label set ({} for an unlabelled one). */
    private readonly read: () => Promise<{ labels: Record<string, string>; h: SummedHistogram }[]>,
    labelNames: readonly string[] = [],
  ) {
    super({ name: metricName, help: metricHelp, buckets: BUCKETS_SECONDS, labelNames, registers: [registry] });
  }

  // @ts-expect-error prom-client types MetricObject.type as an enum; at run time it is the string.
  override get() {
    return this.getForPromString();
  }

  /** What the registry formats (prom-client's Histogram reads its own observations here). */
  async getForPromString() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const { labels, h } of await this.read()) {
      let cumulative = 0;
      BUCKETS_SECONDS.forEach((le, k) => {
        cumulative += h.counts[k] ?? 0;
        values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${this.metricName}_bucket` });
      });
      // +Inf and _count are the buckets' own total (the last bucket counts those above every
      // bound), not the count read with the sum: that is another statement's snapshot, and a
      // heartbeat landing between the two made a finite bucket exceed +Inf. (Each worker row
      // writes its counts and count together, so within a snapshot they are equal.)
      const count = h.counts.reduce((a, b) => a + b, 0);
      values.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${this.metricName}_bucket` });
      values.push({ labels, value: h.sumMs / 1000, metricName: `${this.metricName}_sum` });
      values.push({ labels, value: count, metricName: `${this.metricName}_count` });
    }
    return { name: this.metricName, help: this.metricHelp, type: 'histogram', aggregator: 'sum' as const, values };
  }
}

export function createMetricsRegistry(source: MetricsSource, opts: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });

  new Gauge({
    name: 'leasehold_jobs',
    help: `Jobs per queue and status, read at most every few seconds (see leasehold_jobs_counted_age_seconds), as the console reads them: exact for small statuses and for a queue's queued and retrying jobs (below 10000), else an estimate from the table's statistics; no series where the statistics do not name a queue. Queues with waiting jobs past the first 200 by name are left out.`,
    labelNames: ['queue', 'status'] as const,
    registers: [registry],
    async collect() {
      const s = await source.stats();
      this.reset();
      for (const q of s.queues) {
        for (const status of JOB_STATUSES) if (q.kinds?.[status] !== 'unknown') this.set({ queue: q.queue, status }, q.counts[status]);
      }
    },
  });
  new Gauge({
    name: 'leasehold_jobs_counted_age_seconds',
    help: 'How old the job counts in leasehold_jobs are (they are cached between scrapes).',
    registers: [registry],
    async collect() {
      await source.stats();
      this.set((source.stats.ageMs() ?? 0) / 1000);
    },
  });
  new Gauge({
    name: 'leasehold_oldest_due_job_age_seconds',
    help: 'How long the oldest due, unclaimed job of any queue has waited (0 when none waits), paused queues included: leasehold_queue_oldest_due_job_age_seconds tells them apart.',
    registers: [registry],
    async collect() {
      this.set(((await source.stats()).oldestQueuedAgeMs ?? 0) / 1000);
    },
  });
  // Per queue, so that an alert can leave a queue paused on purpose out: the gauge above
  // counts its due jobs too (a paused queue's backlog is still a backlog), which pages
  // whoever alerts on it for every deliberate pause.
  new Gauge({
    name: 'leasehold_queue_oldest_due_job_age_seconds',
    help: 'Per queue, how long its oldest due, unclaimed job has waited; paused="true" while the queue is paused. No series for a queue with no due job, or past the first 200 queues with waiting jobs.',
    labelNames: ['queue', 'paused'] as const,
    registers: [registry],
    async collect() {
      const s = await source.stats();
      this.reset();
      for (const q of s.queues) {
        if (q.oldestDueAgeMs !== null && q.oldestDueAgeMs !== undefined) {
          this.set({ queue: q.queue, paused: q.paused ? 'true' : 'false' }, q.oldestDueAgeMs / 1000);
        }
      }
    },
  });
  new Gauge({
    name: 'leasehold_running_expired_leases',
    help: 'Running jobs whose lease has expired and that the recover sweep has not moved on yet.',
    registers: [registry],
    async collect() {
      this.set((await source.stats()).runningExpired);
    },
  });
  new Gauge({
    name: 'leasehold_workers_alive',
    help: 'Worker processes with a heartbeat within the last lease (as the console counts them).',
    registers: [registry],
    async collect() {
      this.set((await source.stats()).workersAlive);
    },
  });
  // The sweep is what moves expired leases on: stopped while workers are alive (every sweep
  // failing, or its lock held by a session that does not sweep), nothing else says so. One alert:
  // leasehold_recover_sweep_age_seconds > 60 and on () leasehold_workers_alive > 0.
  new Gauge({
    name: 'leasehold_recover_sweep_age_seconds',
    help: 'Seconds since the recover sweep last ran (database clock); NaN when it never has.',
    registers: [registry],
    async collect() {
      const ago = (await source.stats()).sweptAgoMs;
      // NaN, not 0 (which would read "just now"): a comparison with it is never true.
      this.set(ago === null || ago === undefined ? Number.NaN : ago / 1000);
    },
  });
  // What holds back vacuum of jobs: a transaction left open (an idle psql session, a backup)
  // lets dead rows pile up, and every claim and count reads past them.
  new Gauge({
    name: 'leasehold_db_oldest_transaction_seconds',
    help: 'Age of the oldest open transaction of a client session in this database that holds a snapshot or a transaction id (vacuum cannot clear rows finished after it began); 0 when none.',
    registers: [registry],
    async collect() {
      const t = (await source.stats()).database?.oldestTransaction;
      this.set(t ? t.ageMs / 1000 : 0);
    },
  });
  new Gauge({
    name: 'leasehold_jobs_dead_rows',
    help: "Dead rows in the jobs table (the statistics collector's count); NaN when unknown.",
    registers: [registry],
    async collect() {
      const n = (await source.stats()).database?.deadRows;
      this.set(n === null || n === undefined ? Number.NaN : n);
    },
  });
  new Gauge({
    name: 'leasehold_db_xid_age',
    help: "Age in transaction ids of the database's oldest unfrozen one (datfrozenxid): PostgreSQL stops accepting writes near 2^31 unless vacuum freezes them.",
    registers: [registry],
    async collect() {
      const n = (await source.stats()).database?.xidAge;
      this.set(n === null || n === undefined ? Number.NaN : n);
    },
  });
  // Per queue, so that "jobs wait and nobody consumes their queue" is one alert:
  // leasehold_queue_oldest_due_job_age_seconds > 60 and on (queue) leasehold_queue_workers_alive == 0.
  new Gauge({
    name: 'leasehold_queue_workers_alive',
    help: 'Per queue, the worker processes alive (a heartbeat within the last lease) that consume it; 0 for a queue that holds jobs, or was consumed within the last hour, and that nobody consumes now.',
    labelNames: ['queue'] as const,
    registers: [registry],
    async collect() {
      const s = await source.stats();
      this.reset();
      for (const q of s.queues) if (q.workersAlive !== undefined) this.set({ queue: q.queue }, q.workersAlive);
    },
  });
  new Gauge({
    name: 'leasehold_schedules_failing',
    help: 'Enabled, unpaused schedules whose due tick cannot be enqueued (every worker retries it; the console and `schedule list` say why).',
    registers: [registry],
    async collect() {
      this.set((await source.stats()).schedulesFailing);
    },
  });
  new Gauge({
    name: 'leasehold_schedules_skipping',
    help: "Enabled, unpaused schedules run one at a time (overlap 'skip') whose latest tick was skipped because their previous run is still unfinished; one that stays has a stuck run (alert on it staying longer than a run takes).",
    registers: [registry],
    async collect() {
      this.set((await source.stats()).schedulesSkipping);
    },
  });
  new Gauge({
    name: 'leasehold_worker_jobs_in_flight',
    help: 'Jobs held by live worker processes (running or prefetched under a lease), as of their last heartbeat.',
    registers: [registry],
    async collect() {
      this.set((await source.workerTotals()).inFlight);
    },
  });
  new Gauge({
    name: 'leasehold_signal_backlog',
    help: 'Job ids waiting in the Redis signal list per queue (absent while Redis is not in use).',
    labelNames: ['queue'] as const,
    registers: [registry],
    async collect() {
      const b = await source.backlog();
      this.reset();
      for (const [queue, n] of b) this.set({ queue }, n);
    },
  });
  new Gauge({
    name: 'leasehold_redis_in_use',
    help: '1 while the console rings workers through Redis, 0 while it falls back to PostgreSQL NOTIFY.',
    registers: [registry],
    async collect() {
      this.set((await source.usingRedis()) ? 1 : 0);
    },
  });

  // Where each ring that fell back came from: this console process's own doorbell (enqueues
  // and requeues from the API and the console; it starts again at 0 with the process), and
  // every worker process's (retries, the sweep's re-rings, schedules; summed over all
  // incarnations, like the counters below). Two series, so neither's reset reads as the other's.
  new Counter({
    name: 'leasehold_signal_notify_fallbacks_total',
    help: 'Job ids rung by PostgreSQL NOTIFY although Redis is configured: Redis was down, or refused or timed out the push. Workers waiting on Redis find those jobs only at their next poll.',
    labelNames: ['source'] as const,
    registers: [registry],
    async collect() {
      const workers = (await source.workerTotals()).counters.notifyFallbacks ?? 0;
      this.reset();
      this.inc({ source: 'console' }, source.notifyFallbacks?.() ?? 0);
      this.inc({ source: 'workers' }, workers);
    },
  });
  for (const [key, [name, help]] of Object.entries(COUNTERS) as [WorkerCounter, [string, string]][]) {
    new Counter({
      name,
      help,
      registers: [registry],
      async collect() {
        const v = (await source.workerTotals()).counters[key];
        this.reset();
        this.inc(v);
      },
    });
  }
  for (const [key, [name, help]] of Object.entries(HISTOGRAMS) as [WorkerHistogram, [string, string]][]) {
    new SummedHistogramMetric(name, help, registry, async () => [{ labels: {}, h: (await source.workerTotals()).histograms[key] }]);
  }
  // Per queue and job type: which job fails, which got slow. Labelled series of their own, so
  // the process-wide ones above keep their single series (and the queries written for them).
  new Counter({
    name: 'leasehold_job_outcomes_total',
    help: 'Attempts ended, per queue, job type and outcome (completed; retried: failed with attempts left; failed: to the dead letter; cancelled; snoozed: put off by the handler, no failure; lease_lost: its lease ran out, counted by the worker that recovered the job), summed over all worker incarnations.',
    labelNames: ['queue', 'type', 'outcome'] as const,
    registers: [registry],
    async collect() {
      const byType = await source.typeTotals();
      this.reset();
      // Label values as the attempt history spells its outcomes (lease_lost), not as JSON keys.
      for (const t of byType) for (const outcome of TYPE_OUTCOMES) this.inc({ queue: t.queue, type: t.type, outcome: outcome === 'leaseLost' ? 'lease_lost' : outcome }, t[outcome]);
    },
  });
  new SummedHistogramMetric(
    'leasehold_job_type_run_seconds',
    'Handler run time per attempt, per queue and job type.',
    registry,
    async () =>
      (await source.typeTotals()).map((t) => ({
        labels: { queue: t.queue, type: t.type },
        h: { counts: t.runTimeMs.counts, sumMs: t.runTimeMs.sum, count: t.runTimeMs.count },
      })),
    ['queue', 'type'],
  );
  return registry;
}
