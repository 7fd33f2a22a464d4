/**
 * The doorbell: how workers learn there is work, fast. It is only a signal; PostgreSQL
 * is the record. Losing a ring loses nothing (the recover sweep and the workers' polling
 * find the job), and a duplicate ring is harmless (only one claim can succeed).
 *
 *  - Producers ring after COMMIT: RPUSH the job id to the queue's Redis list. When Redis
 *    is unreachable, or refuses or times out the push, they NOTIFY through PostgreSQL
 *    instead: counted (notifyFallbacks, leasehold_signal_notify_fallbacks_total) and told
 *    at warn, once a minute per queue at most (NotifyFallbacks).
 *  - Workers pop ids from Redis on one blocking connection per process, only while a
 *    slot is free. When Redis is unreachable they LISTEN and poll PostgreSQL, and go back
 *    to Redis when it returns.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis, type RedisOptions } from 'ioredis';
import pg from 'pg';
import type { Executor } from '../db/client';
import type { Logger } from '../log';
import { log as rootLog } from '../log';
import { wakeupNotify } from './ops';
import { DEFAULT_PRIORITY, isJobIdText, PRIORITY_LEVELS } from './job';

export interface Ring {
  jobId: string;
  queue: string;
  /** The job's priority (job.ts PRIORITY_LEVELS): which of the queue's lists it waits in. Default 0. */
  priority?: number;
}

/** Producer side: announce jobs that are due now. Never throws: a ring is best-effort. */
export interface RingOptions {
  /** Ring at the front of the list: recovered and released jobs are the oldest waiting. */
  front?: boolean;
}

export interface Doorbell {
  ring(items: readonly Ring[], opts?: RingOptions): Promise<void>;
  /** Ids waiting in the signal for a queue, or null when there is no Redis signal. */
  backlog(queue: string): Promise<number | null>;
  /** The first `max` ids waiting in a queue's signal (next popped first), or null when there is no Redis signal. */
  peek?(queue: string, max: number): Promise<string[] | null>;
  /** True while the Redis signal is in use. */
  readonly usingRedis: boolean;
  /** True when Redis is configured (whether or not it answers now). */
  readonly redisConfigured?: boolean;
  /** Job ids rung by PostgreSQL NOTIFY although Redis is configured (it did not take them), since this process started. */
  readonly notifyFallbacks?: number;
  /**
   * Takes these rings out of their lists (each at the level given): a job moved to a lower
   * priority, whose ring at its old level would still bring it ahead of the jobs it was put
   * behind. One occurrence each, looked for from the head (the next popped first).
   */
  unring?(items: readonly Ring[]): Promise<void>;
  /** Empties these queues' signals (paused or limited queues are polled, their rings unread). */
  discard?(queues: readonly string[]): Promise<void>;
  /** Resolves once a first connection still being made is ready or refused, or after timeoutMs. */
  settled?(timeoutMs: number): Promise<void>;
  /** Closes its own connections (a Redis doorbell's; NOTIFY goes through a pool it does not own). */
  close?(): Promise<void>;
}

/**
 * A queue's Redis list for one priority level: level 0 (the default) keeps the key it always
 * had; the others have their own namespace (a queue name may hold ':', so no suffix could
 * keep two queues' keys apart). Workers pop the levels in order (RedisReceiver).
 */
export const queueKey = (prefix: string, queue: string, priority = DEFAULT_PRIORITY) =>
  priority === DEFAULT_PRIORITY ? `${prefix}:queue:${queue}` : `${prefix}:queue-p${priority}:${queue}`;

/** Every level's list of a queue, in the order they are popped. */
const levelKeys = (prefix: string, queue: string) => Array.from({ length: PRIORITY_LEVELS }, (_, p) => queueKey(prefix, queue, p));

/** Redis options for short, non-blocking commands: fail fast when Redis is away. */
function fastOptions(name: string): RedisOptions {
  return {
    connectionName: name,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 2_000,
    // A command timeout alone keeps the connection: one gone quiet (a NAT forgetting the
    // flow) made every later push wait out its 2 s and fall back to NOTIFY, for good. No
    // answer for as long drops the connection instead, and ioredis reconnects.
    socketTimeout: 2_000,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2_000),
    lazyConnect: false,
  };
}

/** Logs "Redis unreachable" once per outage and "back" once when it returns. */
export function watchRedis(redis: Redis, what: string, logger: Logger = rootLog) {
  let down = false;
  const onDown = (err?: Error) => {
    if (down) return;
    down = true;
    logger.warn(`Redis unreachable: ${what}`, { err: err?.message });
  };
  redis.on('error', (err) => onDown(err));
  redis.on('close', () => {
    if (redis.status !== 'end') onDown();
  });
  redis.on('ready', () => {
    if (down) logger.info('Redis is back: using the Redis signal again', { what });
    down = false;
  });
}

/** Resolves true once `redis` is connected; false after `timeoutMs` (or at its first error, with `orError`). */
export function redisReady(redis: Redis, timeoutMs: number, orError = false): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  if (redis.status === 'end') return Promise.resolve(false); // closed: it will not connect again
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      resolve(ok);
    };
    const onReady = () => done(true);
    const onError = () => done(false);
    const timer = setTimeout(() => done(false), timeoutMs);
    redis.on('ready', onReady);
    if (orError) redis.on('error', onError);
  });
}

/** How long a ring waits for the doorbell's first connection to Redis before it NOTIFYs instead. */
const FIRST_CONNECT_WAIT_MS = 1_000;
/** Most ids pushed by one RPUSH or LPUSH (a ring of more goes in several, pipelined). */
export const RING_CHUNK = 10_000;

/** How often, at most, one queue's rings falling back to NOTIFY are told in the log. */
export const NOTIFY_FALLBACK_WARN_EVERY_MS = 60_000;

/**
 * Counts the rings that went by PostgreSQL NOTIFY although Redis is configured, and tells
 * of them at warn, once per NOTIFY_FALLBACK_WARN_EVERY_MS per queue, saying how many were
 * folded into the line since the last. Such a ring still wakes the workers listening on
 * PostgreSQL (those without Redis), but a worker waiting on its Redis pop hears it only at
 * its next poll: a push that Redis keeps refusing (a replica after a failover answers
 * READONLY, a full instance OOM) while the connection stays up was a debug line only, with
 * every job waiting a poll interval and nothing to show why. On monotonic time: a stepped
 * wall clock must not silence the line for an hour.
 */
export class NotifyFallbacks {
  /** Job ids rung by NOTIFY instead of Redis, since this process started. */
  total = 0;
  private readonly queues = new Map<string, { toldAt: number; folded: number; jobs: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly everyMs = NOTIFY_FALLBACK_WARN_EVERY_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  note(byQueue: ReadonlyMap<string, readonly string[]>, why: string, err?: unknown) {
    const now = this.now();
    for (const [queue, ids] of byQueue) {
      this.total += ids.length;
      let q = this.queues.get(queue);
      if (q && now - q.toldAt < this.everyMs) {
        q.folded++;
        q.jobs += ids.length;
        continue;
      }
      // Queues are few; a producer naming a new one each time must not grow this for ever.
      if (!q && this.queues.size >= 1_000) this.queues.clear();
      const folded = q ? { foldedRings: q.folded, foldedJobs: q.jobs } : {};
      this.logger.warn('a ring went by PostgreSQL NOTIFY instead of Redis: workers waiting on Redis find these jobs at their next poll', {
        queue,
        jobs: ids.length,
        why,
        ...(err === undefined ? {} : { err: (err as Error)?.message ?? String(err) }),
        ...folded,
        nextReportInS: Math.round(this.everyMs / 1000),
      });
      q ??= { toldAt: now, folded: 0, jobs: 0 };
      q.toldAt = now;
      q.folded = 0;
      q.jobs = 0;
      this.queues.set(queue, q);
    }
  }
}

/** Pushes to Redis lists; falls back to PostgreSQL NOTIFY while Redis is unreachable. */
export class RedisDoorbell implements Doorbell {
  readonly redis: Redis;
  private readonly fallbacks: NotifyFallbacks;

  /** Job ids this doorbell rang by NOTIFY because Redis did not take them (see NotifyFallbacks). */
  get notifyFallbacks() {
    return this.fallbacks.total;
  }

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly fallback: Executor | null,
    private readonly logger: Logger = rootLog,
  ) {
    this.redis = new Redis(url, fastOptions('leasehold:doorbell'));
    this.fallbacks = new NotifyFallbacks(logger);
    watchRedis(this.redis, 'producers NOTIFY through PostgreSQL until it returns', logger);
    this.redis.once('ready', () => (this.everReady = true));
  }

  /** The connection was ready once: later reconnections are not a start-up to wait for. */
  private everReady = false;

  /**
   * Rings sent while the first connection is still being made wait for it (briefly): workers
   * on Redis do not hear NOTIFY, so a process's first enqueues would otherwise wait for a
   * worker's poll. Made by the first ring that needs it; later rings never wait again.
   */
  private firstConnection: Promise<boolean> | null = null;

  get usingRedis() {
    return this.redis.status === 'ready';
  }

  readonly redisConfigured = true;

  async unring(items: readonly Ring[]): Promise<void> {
    if (!items.length || this.redis.status !== 'ready') return;
    const pipe = this.redis.pipeline();
    for (const r of items) pipe.lrem(queueKey(this.prefix, r.queue, r.priority), 1, r.jobId);
    const failed = (await pipe.exec())?.find(([err]) => err)?.[0];
    if (failed) throw failed;
  }

  async ring(items: readonly Ring[], opts: RingOptions = {}): Promise<void> {
    if (items.length === 0) return;
    const byQueue = groupBy(items, (r) => r.queue);
    if (this.redis.status !== 'ready') await (this.firstConnection ??= redisReady(this.redis, FIRST_CONNECT_WAIT_MS, true));
    if (this.redis.status === 'ready') {
      try {
        // LPUSH puts each id in front of the last, so ids for the front go in reversed; and
        // in commands of at most RING_CHUNK ids (a spread of 130,000 arguments overflows the stack).
        const pushes: [key: string, ids: string[]][] = [];
        for (const [key, ids] of groupBy(items, (r) => queueKey(this.prefix, r.queue, r.priority))) {
          const ordered = opts.front ? ids.reverse() : ids;
          for (let k = 0; k < ordered.length; k += RING_CHUNK) pushes.push([key, ordered.slice(k, k + RING_CHUNK)]);
        }
        if (pushes.length === 1) {
          // One command (the common case): no pipeline to build.
          const [key, ids] = pushes[0]!;
          if (opts.front) await this.redis.lpush(key, ...ids);
          else await this.redis.rpush(key, ...ids);
          return;
        }
        const pipe = this.redis.pipeline();
        for (const [key, ids] of pushes) {
          if (opts.front) pipe.lpush(key, ...ids);
          else pipe.rpush(key, ...ids);
        }
        const results = await pipe.exec();
        const failed = results?.find(([err]) => err)?.[0];
        if (results && !failed) return;
        // Some pushes may have landed: the ids are rung twice then, which is harmless.
        this.fallbacks.note(byQueue, 'a push failed', failed ?? 'no answer');
      } catch (err) {
        this.fallbacks.note(byQueue, 'the push failed', err);
      }
    } else {
      this.fallbacks.note(byQueue, `Redis is not connected (${this.redis.status})`);
    }
    await notify(this.fallback, [...byQueue.keys()], this.logger);
  }

  async backlog(queue: string): Promise<number | null> {
    if (this.redis.status !== 'ready') return null;
    try {
      const pipe = this.redis.pipeline();
      for (const key of levelKeys(this.prefix, queue)) pipe.llen(key);
      const lengths = await pipe.exec();
      if (!lengths || lengths.some(([err]) => err)) return null;
      return lengths.reduce((sum, [, n]) => sum + Number(n), 0);
    } catch {
      return null;
    }
  }

  async settled(timeoutMs: number): Promise<void> {
    if (this.everReady || this.usingRedis || !['wait', 'connecting', 'connect'].includes(this.redis.status)) return;
    await redisReady(this.redis, timeoutMs, true); // connected, or refused: settled either way
  }

  async peek(queue: string, max: number): Promise<string[] | null> {
    if (this.redis.status !== 'ready' || max <= 0) return null;
    try {
      // Each level's first `max` (one round trip), in the order workers pop them.
      const pipe = this.redis.pipeline();
      for (const key of levelKeys(this.prefix, queue)) pipe.lrange(key, 0, max - 1);
      const lists = await pipe.exec();
      if (!lists || lists.some(([err]) => err)) return null;
      return lists.flatMap(([, ids]) => ids as string[]).slice(0, max);
    } catch {
      return null;
    }
  }

  async discard(queues: readonly string[]): Promise<void> {
    if (this.redis.status !== 'ready' || !queues.length) return;
    await this.redis.del(...queues.flatMap((q) => levelKeys(this.prefix, q))).catch(() => {});
  }

  async close() {
    this.redis.disconnect();
  }
}

/** The doorbell when no Redis is configured: PostgreSQL NOTIFY only. */
export class PgDoorbell implements Doorbell {
  readonly usingRedis = false;
  readonly redisConfigured = false;
  constructor(
    private readonly db: Executor,
    private readonly logger: Logger = rootLog,
  ) {}
  async ring(items: readonly Ring[]) {
    if (items.length) await notify(this.db, [...groupBy(items, (r) => r.queue).keys()], this.logger);
  }
  async backlog() {
    return null;
  }
  async discard() {}
}

async function notify(db: Executor | null, queues: string[], logger: Logger) {
  if (!db) return;
  try {
    await wakeupNotify(db, queues);
  } catch (err) {
    // The job is committed; the workers' polling and the recover sweep will find it.
    logger.debug('NOTIFY failed; workers will find the job by polling', { err });
  }
}

/** Job ids grouped by `keyOf` (a queue, or the list a ring goes to), in the order given. */
function groupBy(items: readonly Ring[], keyOf: (r: Ring) => string) {
  const groups = new Map<string, string[]>();
  for (const r of items) {
    const key = keyOf(r);
    let ids = groups.get(key);
    if (!ids) groups.set(key, (ids = []));
    ids.push(r.jobId);
  }
  return groups;
}
export class SignalUnavailable extends Error {}

/**
 * Worker side of the Redis doorbell: one dedicated connection per process (a blocking
 * pop holds its connection), used only while the process has a free slot.
 */
export class RedisReceiver {
  readonly redis: Redis;
  private rotation = 0;
  private warnedNotIds = false;

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly logger: Logger = rootLog,
  ) {
    this.redis = new Redis(url, {
      ...fastOptions('leasehold:receiver'),
      // Blocking pops wait longer than any command timeout; take() gives each a deadline
      // instead, past which it drops the connection. (Not ioredis's blockingTimeout: it ends a
      // pop that never returns as an empty one and keeps the connection, so a connection gone
      // quiet went on answering every pop with nothing, and jobs waited for the poll.)
      commandTimeout: undefined,
      socketTimeout: undefined, // a blocking pop is silent until its timeout
    });
    watchRedis(this.redis, 'workers claim from PostgreSQL (poll + LISTEN) until it returns', logger);
  }

  get available() {
    return this.redis.status === 'ready';
  }

  /** Resolves true once connected (false after `timeoutMs`): avoids a false "unreachable" at start. */
  ready(timeoutMs: number): Promise<boolean> {
    return redisReady(this.redis, timeoutMs);
  }

  /**
   * Up to `max` job ids from the given queues, each with its queue. Takes what is waiting at
   * once; if nothing is, blocks up to `timeoutMs` for the next ring (0 = do not block).
   * Throws SignalUnavailable when Redis cannot be reached.
   */
  async take(queues: readonly string[], max: number, timeoutMs: number): Promise<Ring[]> {
    if (!this.available) throw new SignalUnavailable('redis not ready');
    // A connection that went silent (a partition, not a reset) would hang the pop forever:
    // past its deadline, drop the connection, let ioredis reconnect, and poll PostgreSQL.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.redis.disconnect(true);
        reject(new SignalUnavailable('redis did not answer in time'));
      }, timeoutMs + 3_000);
    });
    // A connection reset under the pop (CLIENT KILL, a proxy's or a NAT's reset, close()):
    // ioredis reconnects at once but drops the pop unanswered (no resending of commands
    // under way), which left the worker deaf until the deadline, with Redis up and ids in it.
    let onClose!: () => void;
    const closed = new Promise<never>((_, reject) => {
      onClose = () => reject(new SignalUnavailable('redis connection closed under the pop'));
      this.redis.once('close', onClose);
    });
    try {
      return await Promise.race([this.pop(queues, max, timeoutMs), deadline, closed]);
    } finally {
      clearTimeout(timer);
      this.redis.off('close', onClose);
    }
  }

  /** Redis 7's LMPOP/BLMPOP: one round trip for a blocking pop of up to `max` ids. */
  private multiPop = true;

  private async pop(queues: readonly string[], max: number, timeoutMs: number): Promise<Ring[]> {
    // LMPOP takes from the first non-empty list: the levels in priority order, and within a
    // level the queues rotated so one busy queue cannot starve the others.
    const start = this.rotation++ % queues.length;
    const order = queues.map((_, k) => queues[(start + k) % queues.length]!);
    const lists = new Map<string, { queue: string; priority: number }>();
    for (let priority = 0; priority < PRIORITY_LEVELS; priority++) {
      for (const queue of order) lists.set(queueKey(this.prefix, queue, priority), { queue, priority });
    }
    const keys = [...lists.keys()];
    const rings = (key: string, ids: readonly string[]) => {
      const { queue, priority } = lists.get(key)!;
      // Only job ids: an entry that is not one (written by hand, by another program sharing
      // the prefix) would make the whole claim fail, and the real ids popped with it be dropped.
      const good = ids.filter(isJobIdText);
      if (good.length < ids.length && !this.warnedNotIds) {
        this.warnedNotIds = true; // once per process: a program writing there would flood the log
        this.logger.warn('dropped entries of a queue list that are not job ids (is another program writing under this Redis prefix?)', {
          key,
          dropped: ids.filter((id) => !isJobIdText(id)).slice(0, 3),
        });
      }
      return good.map((jobId) => ({ jobId, queue, priority }));
    };
    try {
      if (this.multiPop) {
        try {
          const got =
            timeoutMs > 0
              ? await this.redis.blmpop(timeoutMs / 1000, keys.length, ...keys, 'LEFT', 'COUNT', max)
              : await this.redis.lmpop(keys.length, ...keys, 'LEFT', 'COUNT', max);
          return got ? rings(got[0], got[1]) : [];
        } catch (err) {
          if (!/unknown command/i.test(String(err))) throw err;
          this.multiPop = false; // Redis < 7: LPOP with a count, then BLPOP
        }
      }
      const out: Ring[] = [];
      // Which lists hold ids, in one round trip (there are ten per queue), then LPOP from those in order.
      const lengths = (await this.redis.pipeline(keys.map((key) => ['llen', key])).exec()) ?? [];
      for (let k = 0; k < keys.length && out.length < max; k++) {
        const [err, n] = lengths[k] ?? [];
        if (err || !n) continue;
        const got = await this.redis.lpop(keys[k]!, max - out.length);
        if (got) out.push(...rings(keys[k]!, got));
      }
      if (out.length || timeoutMs <= 0) return out;
      const popped = await this.redis.blpop(...keys, timeoutMs / 1000);
      if (!popped) return [];
      out.push(...rings(popped[0], [popped[1]]));
      if (max > 1) out.push(...rings(popped[0], (await this.redis.lpop(popped[0], max - 1)) ?? []));
      return out;
    } catch (err) {
      if (!this.available) throw new SignalUnavailable(String(err));
      throw err;
    }
  }

  close() {
    this.redis.disconnect();
  }
}

const LISTEN_SETUP_TIMEOUT_MS = 5_000;

/**
 * Worker side of the Postgres-only doorbell: a dedicated LISTEN connection that wakes the
 * worker's poll early. Reconnects by itself after errors.
 */
export class PgReceiver {
  private client: pg.Client | null = null;
  private waiters = new Set<() => void>();
  /**
   * A wake-up that came while nobody waited (the worker was claiming between two waits):
   * the next wait returns at once. Dropped, it left the worker waiting a whole poll
   * interval for a job rung while it looked (a CI run caught it: 30 s with pollMs 60 s).
   */
  private missed = false;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  /** The latest connect()'s number: a connection's events count only while it is the latest, and the receiver open. */
  private attempt = 0;

  constructor(
    private readonly connectionString: string,
    private readonly logger: Logger = rootLog,
  ) {}

  async start() {
    await this.connect();
  }

  private async connect() {
    if (this.closed) return;
    // An older connection's late 'end' or 'error' (a socket half-closed in a partition) must
    // not open another next to the live one, which would be left listening, never closed; and
    // a connection made after close() (while it was being made) is ended, not kept.
    const attempt = ++this.attempt;
    const current = () => attempt === this.attempt && !this.closed;
    // Bounded, so a connection that goes quiet while it is made (or while LISTEN is sent)
    // cannot hold up the fetch loop that started it: it fails, and is made again.
    const client = new pg.Client({
      connectionString: this.connectionString,
      application_name: 'leasehold:listen',
      connectionTimeoutMillis: LISTEN_SETUP_TIMEOUT_MS,
      query_timeout: LISTEN_SETUP_TIMEOUT_MS,
      keepAlive: true,
    });
    client.on('error', () => current() && this.scheduleReconnect());
    client.on('end', () => current() && this.scheduleReconnect());
    client.on('notification', () => this.wakeAll());
    try {
      await client.connect();
      await client.query('LISTEN leasehold_wakeup');
      if (!current()) {
        client.end().catch(() => {});
        return;
      }
      this.client = client;
      this.wakeAll(); // anything rung while disconnected is found by the next poll
    } catch (err) {
      client.end().catch(() => {});
      if (!current()) return;
      this.logger.debug('LISTEN connection failed; retrying', { err });
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect() {
    if (this.closed || this.reconnectTimer) return;
    this.client = null;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect();
    }, 1_000);
  }

  private wakeAll() {
    const ws = [...this.waiters];
    this.waiters.clear();
    this.missed = ws.length === 0;
    for (const w of ws) w();
  }

  /** A wake-up is waiting for the next wait() (see missed). */
  get pending() {
    return this.missed;
  }

  /** Resolves at the next NOTIFY (or one that came since the last wait), at `timeoutMs`, or at wake(). */
  wait(timeoutMs: number): Promise<void> {
    if (this.missed) {
      this.missed = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
    });
  }

  wake() {
    this.wakeAll();
  }

  async close() {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.wakeAll();
    // Ended politely, but waited on no longer than a setup: the end waits for the server's
    // side to close, which a connection gone quiet (a partition, a frozen server or pooler)
    // never does — a stopping worker waited on it until its supervisor killed it at the
    // deadline or, orphaned, for as long as the database stayed silent. Not ended by then,
    // its socket is let go at once: left open, it would hold the process alive.
    const client = this.client;
    if (!client) return;
    const ended = client.end().then(() => true, () => true);
    if (!(await Promise.race([ended, sleep(LISTEN_SETUP_TIMEOUT_MS, false, { ref: false })]))) {
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    }
  }
}
