/**
 * The chaos suite's world: a PostgreSQL and a Redis of its own (on free ports, so they
 * can be crashed and restarted without touching anyone else's), one database per
 * scenario, worker "hosts" as real supervisor processes, and the facts to judge a run by.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createPool } from '../../lib/db/client';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../../lib/db/embedded';
import { runMigrations } from '../../lib/db/migrate';
import { createLogger } from '../../lib/log';
import * as ops from '../../lib/queue/ops';
import { RedisDoorbell } from '../../lib/queue/signal';
import { type Proc, root, startNode, workerEnv } from '../processes';
import { type OwnRedis, ownRedis } from '../redis-server';
import { waitFor } from '../wait';
import { LEDGER_DDL } from './handlers';

/** The fast profile of ../shared/research/reliability.md §7.0. */
export const LEASE_MS = 2_000;
export const HEARTBEAT_MS = 500;
export const SWEEP_MS = 1_000;
export const POLL_MS = 1_000;
/** Recovery bound: lease + sweep + pop timeout + 1 s. */
export const RECOVERY_BOUND_S = (LEASE_MS + SWEEP_MS + POLL_MS + 1_000) / 1000;

const HANDLERS = path.join(root, 'test/chaos/handlers.ts');
const log = createLogger({ chaos: true });

export class ChaosEnv {
  private constructor(
    readonly pg: EmbeddedDatabase,
    readonly redis: OwnRedis,
    readonly tmp: string,
  ) {}

  static async start(): Promise<ChaosEnv> {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-chaos-'));
    fs.chmodSync(tmp, 0o755); // PostgreSQL runs as the postgres user
    const pgServer = await startEmbeddedPostgres(tmp, (m) => log.debug(m));
    const redis = await ownRedis();
    return new ChaosEnv(pgServer, redis, tmp);
  }

  async stop() {
    await this.pg.stop().catch(() => {});
    await this.redis.kill();
    fs.rmSync(this.tmp, { recursive: true, force: true });
  }

  /** A fresh, migrated database for one scenario, with the ledger table. */
  async scenario(name: string): Promise<Scenario> {
    const db = `chaos_${name.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}`.slice(0, 60);
    const admin = new pg.Client({ connectionString: this.pg.url.replace(/\/leasehold$/, '/postgres') });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${db}"`);
    await admin.end();
    const url = this.pg.url.replace(/\/leasehold$/, `/${db}`);
    await runMigrations(url);
    const pool = createPool(url, { name: `chaos-${name}`, max: 10 });
    await pool.query(LEDGER_DDL);
    const prefix = `chaos_${db}`;
    const doorbell = new RedisDoorbell(this.redis.url, prefix, pool, log);
    try {
      await waitFor('the doorbell to reach Redis', () => doorbell.usingRedis, { timeoutMs: 10_000 });
    } catch (err) {
      // The caller never gets a Scenario to close: close what was opened here, or its
      // reconnecting pool and Redis client keep the test process alive forever.
      await doorbell.close();
      await pool.end();
      throw err;
    }
    const onceDir = fs.mkdtempSync(path.join(this.tmp, 'fp-'));
    return new Scenario(this, name, url, pool, doorbell, prefix, onceDir);
  }
}

export interface HostOptions {
  processes?: number;
  concurrency?: number;
  /** LEASEHOLD_FAILPOINTS for this host, e.g. "mid_handler=kill". Each fires once across all hosts (N times with `*N`). */
  failpoints?: string;
  /** Connection strings the host uses instead of the real servers (e.g. through a proxy). */
  databaseUrl?: string;
  redisUrl?: string;
  env?: Record<string, string>;
  /** Run the host's processes under libfaketime with this offset, e.g. "+60s". */
  faketime?: string;
}

export class Scenario {
  readonly queue: string;
  private readonly hosts: Proc[] = [];

  constructor(
    readonly env: ChaosEnv,
    readonly name: string,
    readonly url: string,
    readonly pool: pg.Pool,
    readonly doorbell: RedisDoorbell,
    readonly prefix: string,
    readonly onceDir: string,
  ) {
    this.queue = 'chaos';
  }

  /** This scenario's database through a proxy of the scenario's PostgreSQL (startProxy(env.pg.port)). */
  urlThrough(proxy: { port: number }): string {
    return this.url.replace(`:${this.env.pg.port}/`, `:${proxy.port}/`);
  }

  /** A worker "host": a supervisor with its processes, started with node directly. */
  startHost(o: HostOptions = {}): Proc {
    const env: Record<string, string> = {
      ...workerEnv({
        databaseUrl: o.databaseUrl ?? this.url,
        redisUrl: o.redisUrl ?? this.env.redis.url,
        prefix: this.prefix,
        leaseMs: LEASE_MS,
        heartbeatMs: HEARTBEAT_MS,
        recoverMs: SWEEP_MS,
        pollMs: POLL_MS,
      }),
      LEASEHOLD_HANDLERS: HANDLERS,
      LEASEHOLD_RESULTS_DIR: path.join(this.env.tmp, 'results', this.name),
      LEASEHOLD_SIGNAL_GRACE_MS: '500',
      ...(o.failpoints ? { LEASEHOLD_FAILPOINTS: o.failpoints, LEASEHOLD_FAILPOINTS_ONCE_DIR: this.onceDir } : {}),
      ...(o.faketime
        ? {
            LD_PRELOAD: FAKETIME_LIB,
            FAKETIME: o.faketime,
            // Wall clock skewed; timers and the lease watchdog (monotonic) run normally.
            FAKETIME_DONT_FAKE_MONOTONIC: '1',
            FAKETIME_NO_CACHE: '1',
          }
        : {}),
      ...o.env,
    };
    const host = startNode(
      'worker/bin/worker.ts',
      ['--processes', String(o.processes ?? 2), '--concurrency', String(o.concurrency ?? 5), '--queues', this.queue],
      env,
    );
    this.hosts.push(host);
    return host;
  }

  /**
   * n jobs of chaos.work (or `o.type`); every other chaos.work job returns no result, so that
   * both of the worker's ways to a completion meet each fault (see test/chaos/handlers.ts).
   */
  async enqueue(n: number, payload: (i: number) => object = () => ({ ms: 50 }), o: { maxAttempts?: number; type?: string } = {}) {
    const ids: string[] = [];
    for (let k = 0; k < n; k += 500) {
      const res = await ops.jobEnqueue(
        this.pool,
        Array.from({ length: Math.min(500, n - k) }, (_, i) => ({
          type: o.type ?? 'chaos.work',
          queue: this.queue,
          payload: o.type ? payload(k + i) : { ...payload(k + i), ...((k + i) % 2 ? { noResult: true } : {}) },
          maxAttempts: o.maxAttempts ?? 5,
        })),
        { doorbell: this.doorbell },
      );
      ids.push(...res.map((r) => r.id));
    }
    return ids;
  }

  async counts() {
    const { rows } = await this.pool.query(
      `SELECT count(*) FILTER (WHERE status = 'completed')::int AS completed,
              count(*) FILTER (WHERE status = 'failed')::int AS failed,
              count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled,
              count(*) FILTER (WHERE status IN ('queued', 'retrying', 'running'))::int AS open,
              count(*) FILTER (WHERE status = 'running')::int AS running,
              count(*)::int AS total,
              coalesce(sum(attempt_count), 0)::int AS claims
         FROM jobs`,
    );
    return rows[0] as { completed: number; failed: number; cancelled: number; open: number; running: number; total: number; claims: number };
  }

  async waitForAll(status: 'completed' | 'terminal', n: number, timeoutMs = 120_000) {
    await waitFor(
      `${n} jobs ${status}`,
      async () => {
        const c = await this.counts();
        return status === 'completed' ? c.completed === n : c.open === 0 && c.total === n;
      },
      { timeoutMs, intervalMs: 100 },
    );
  }

  /** Facts from the ledger: starts and side effects per job. */
  async ledger() {
    const { rows } = await this.pool.query(
      `SELECT count(*) FILTER (WHERE event = 'start')::int AS starts,
              count(DISTINCT job_id) FILTER (WHERE event = 'start')::int AS started_jobs,
              count(*) FILTER (WHERE event = 'effect')::int AS effects,
              count(DISTINCT job_id) FILTER (WHERE event = 'effect')::int AS unique_effects
         FROM chaos_effects`,
    );
    return rows[0] as { starts: number; started_jobs: number; effects: number; unique_effects: number };
  }

  /**
   * Jobs that ran in two places at once, from the handlers' own ledger: a later attempt
   * started before an earlier one (of process `pid`, or any) recorded its abort (its handler told to
   * stop), or with no abort recorded at all. The lease's promise: a worker that cannot renew
   * stops its handler before another may take the job. Also the smallest margin seen (ms
   * from an abort to the next start), to show how close the run came.
   */
  async overlaps(pid?: number): Promise<{ overlapping: string[]; marginMs: number | null }> {
    const { rows } = await this.pool.query(
      `SELECT s.job_id::text AS id, extract(epoch FROM n.at - a.at) * 1000 AS margin
         FROM chaos_effects s
         JOIN LATERAL (SELECT min(at) AS at FROM chaos_effects n WHERE n.job_id = s.job_id AND n.event = 'start' AND n.attempt > s.attempt) n ON n.at IS NOT NULL
         LEFT JOIN LATERAL (SELECT min(at) AS at FROM chaos_effects a WHERE a.job_id = s.job_id AND a.attempt = s.attempt AND a.pid = s.pid AND a.event = 'abort') a ON true
        WHERE s.event = 'start' AND ($1::int IS NULL OR s.pid = $1)`,
      [pid ?? null],
    );
    const overlapping = rows.filter((r) => r.margin === null || Number(r.margin) <= 0).map((r) => r.id as string);
    const margins = rows.filter((r) => r.margin !== null).map((r) => Number(r.margin));
    return { overlapping, marginMs: margins.length ? Math.round(Math.min(...margins)) : null };
  }

  /**
   * Seconds from `faultAt` (ms, wall clock) until the last of `jobIds` was claimed again —
   * by its next attempt — measured with the database's timestamps.
   */
  async recoverySeconds(jobIds: readonly string[], faultAtMs: number): Promise<number> {
    if (jobIds.length === 0) return 0;
    const { rows } = await this.pool.query(
      `SELECT max(extract(epoch FROM s.first_start) * 1000) AS last_restart
         FROM (SELECT j.job_id,
                      (SELECT min(a.started_at) FROM job_attempts a
                        WHERE a.job_id = j.job_id AND a.started_at >= to_timestamp($2 / 1000.0)) AS first_start
                 FROM jobs j WHERE j.job_id = ANY($1::bigint[])) s`,
      [jobIds, faultAtMs],
    );
    const last = rows[0].last_restart;
    return last === null ? NaN : Math.max(0, (Number(last) - faultAtMs) / 1000);
  }

  /** Jobs whose attempt by this process was lost (lease_lost), and how many. */
  async heldBy(pid: number): Promise<string[]> {
    const { rows } = await this.pool.query(
      `SELECT DISTINCT job_id FROM job_attempts WHERE outcome IN ('lease_lost', 'aborted') AND worker_id LIKE $1`,
      [`%:${pid}:%`],
    );
    return rows.map((r) => String(r.job_id));
  }

  /** The hosts' warnings and errors (for a failed run's notes). */
  warnings(max = 8): string[] {
    return this.hosts
      .flatMap((h) => h.output().split('\n'))
      .filter((l) => /\b(WARN|ERROR)\b/.test(l))
      .slice(-max);
  }

  async close() {
    for (const h of this.hosts) await h.stop();
    await this.doorbell.close();
    await this.pool.end();
  }
}

export const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/** One line of the chaos table. */
export interface Row {
  scenario: string;
  jobs: number;
  completed: number;
  lost: number;
  claims: number;
  duplicates: number;
  /** The most duplicates the scenario's faults allow (faults that hit a claimed job). */
  allowed: number;
  recoveryS: number | null;
  recoveryBoundS: number | null;
  pass: boolean;
  notes: string;
}
