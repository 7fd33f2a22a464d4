/**
 * A fixed-bucket histogram that worker processes keep and report with their heartbeat;
 * /api/metrics adds the buckets of every process into Prometheus histograms.
 */
export const DURATION_BUCKETS_MS = [1, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000];

export interface HistogramSnapshot {
  /** Counts per bucket (not cumulative); the last entry counts values above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram {
  readonly counts = new Array<number>(DURATION_BUCKETS_MS.length + 1).fill(0);
  sum = 0;
  count = 0;

  observe(v: number) {
    let k = 0;
    while (k < DURATION_BUCKETS_MS.length && v > DURATION_BUCKETS_MS[k]!) k++;
    this.counts[k]!++;
    this.sum += v;
    this.count++;
  }

  snapshot(): HistogramSnapshot {
    return { counts: [...this.counts], sum: Math.round(this.sum), count: this.count };
  }
}
