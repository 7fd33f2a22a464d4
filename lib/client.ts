/**
 * The producer client: enqueue jobs from another Node service, through the same
 * validation and the same INSERT as POST /api/jobs, read them back, wait for them, and
 * cancel, requeue or reschedule them with the console's own statements.
 *
 *   import { createClient } from 'leasehold';
 *   const leasehold = createClient({ databaseUrl: process.env.DATABASE_URL });
 *   const { id } = await leasehold.enqueue({ type: 'demo.sleep', payload: { ms: 100 } });
 *
 * Transactional enqueue: the job row commits or rolls back with the caller's own rows,
 * and workers are rung only after the COMMIT (a worker woken earlier could not see the
 * row yet; one woken for a rolled-back row would find nothing):
 *
 *   await leasehold.withTransaction(pool, async (tx) => {
 *     await tx.client.query('INSERT INTO orders ...');
 *     await tx.enqueue({ type: 'email.send', payload: { order: 42 } });
 *   }); // BEGIN … COMMIT, then the ring; a throw rolls back and rings nothing
 *
 * or, inside a transaction the caller runs itself:
 *
 *   const tx = leasehold.transaction(pgClient);   // after the caller's BEGIN
 *   await tx.enqueue({ ... });
 *   await pgClient.query('COMMIT');
 *   await tx.afterCommit();                       // rings; skip it after a ROLLBACK
 */
import { setTimeout } from 'node:timers/promises';
import pg from 'pg';
import { commit, createPool, type Executor } from './db/client';
import { detailDto } from './http/dto';
import { enqueueBody, MAX_BULK_ENQUEUE, MAX_BULK_IDS, reasonText, rescheduleBody, toEnqueueInput } from './http/schemas';
import { builtinJobTypes, type KnownJobTypes, knownJobTypes } from './job-types';
import { createLogger, type Logger } from './log';
import { knownQueueError, QueueError } from './queue/errors';
import { MAX_PAYLOAD_DEPTH } from './queue/text';
import { type ActionOutcome, type ActionReport, type EnqueueInput, type EnqueueResult, jobCancel, jobEnqueue, jobRequeue, jobReschedule } from './queue/ops';
import { audited, jobActionEntry, processActor, rescheduleEntry } from './audit/log';
import { isJobIdText } from './queue/job';
import { getJob } from './queue/read';
import { type Doorbell, PgDoorbell, RedisDoorbell, type Ring } from './queue/signal';
import { isRedisUrl, redisDisabled } from './config';
import { resolveRedisUrl } from './redis-url';
import { FsResultStore, type ResultStore, resultsDir } from './results';
import { redisSettled } from './redis-settled';

export { QueueError as LeaseholdError } from './queue/errors';
// For handlers: fail a job for good, retry it after a delay of the handler's choosing, or snooze it (no attempt spent).
export { PermanentError, RetryError, SnoozeError } from './queue/errors';
export type { ErrorCode } from './queue/errors';
export type { ActionOutcome, EnqueueResult } from './queue/ops';
/** For a module of job types (LEASEHOLD_HANDLERS): what a handler is given. */
export type { Handler, JobContext } from '../worker/handlers/types';
/**
 * The shapes of a handlers module's `jobTypes` entries and `schedules` items, for
 * `satisfies` (a misspelt field is then the compiler's error before it is the worker's).
 */
export type { JobTypeDeclaration } from './job-types';
export type { ScheduleInput as ScheduleDefinition } from './queue/ops';
/** Where results live, for createClient's `results` (the filesystem store, or your own). */
export { FsResultStore } from './results';
export type { ResultStore } from './results';

export interface ClientOptions {
  /** PostgreSQL connection string; default process.env.DATABASE_URL. Ignored when `pool` is given. */
  databaseUrl?: string;
  /** Your own pool (not closed by close()). */
  pool?: pg.Pool;
  /**
   * Redis for the wake-up signal: a URL, or null for none (workers then learn of jobs
   * through PostgreSQL NOTIFY and their polling). Default: REDIS_URL, else the local
   * Redis if it answers, as the console and the workers decide.
   */
  redisUrl?: string | null;
  /** Redis key prefix; must match the workers'. Default LEASEHOLD_REDIS_PREFIX or 'leasehold'. */
  redisPrefix?: string;
  /**
   * Where handlers' results are stored, so that a requeue of a completed job deletes its
   * last result as the console's does. Default: the directory the workers use given this
   * process's environment (LEASEHOLD_RESULTS_DIR, else <LEASEHOLD_DATA_DIR>/results, from
   * the working directory, as the CLI reads it); null leaves results where they are.
   */
  results?: ResultStore | null;
  logger?: Logger;
}

/** One job to enqueue: the POST /api/jobs body, with `runAt` also as a Date. */
export interface JobInput {
  type: string;
  payload?: unknown;
  queue?: string;
  maxAttempts?: number;
  runAt?: Date | string | null;
  idempotencyKey?: string | null;
  /** 0 (the default) runs first, 9 last; within a level, the oldest due job first. */
  priority?: number;
  /** One job at a time per key: while one with it is queued, retrying or running, enqueue returns that one (`created: false`). */
  singletonKey?: string | null;
}

/** The job with its attempts: the body of GET /api/jobs/:id. */
/** A job as get() returns it: always with its payload. */
export type JobWithAttempts = Omit<ReturnType<typeof detailDto>, 'payloadText' | 'payloadOmitted'> & { payloadText: string };

/** What cancel(), requeue() or reschedule() did to each job, in the order given (a repeated id once). */
export interface ActionResult {
  changed: number;
  skipped: number;
  items: { id: string; ok: boolean; outcome: ActionOutcome; reason?: string }[];
}
/** cancel()'s answer (the name it had first). */
export type CancelReport = ActionResult;

/** Enqueue inside a transaction the caller controls; ring with afterCommit() after COMMIT. */
export interface Transaction {
  /** The caller's connection, inside its transaction: run your own statements on it. */
  readonly client: pg.PoolClient | pg.Client;
  enqueue(job: JobInput): Promise<EnqueueResult>;
  enqueueMany(jobs: readonly JobInput[]): Promise<EnqueueResult[]>;
  /** Rings the workers for the due jobs enqueued so far, once. Call it after your COMMIT only. */
  afterCommit(): Promise<void>;
}

export interface LeaseholdClient {
  enqueue(job: JobInput): Promise<EnqueueResult>;
  /** All or nothing: validated first, inserted in one transaction (1000 rows per statement). */
  enqueueMany(jobs: readonly JobInput[]): Promise<EnqueueResult[]>;
  /** The job with its attempts, or null. */
  get(id: string): Promise<JobWithAttempts | null>;
  /**
   * The job once it has finished (completed, failed or cancelled), read every 50 ms at first,
   * then less often (at most each second). Rejects with a LeaseholdError `not_found` for no
   * such job, and with the signal's reason when `signal` aborts or `timeoutMs` passes (a
   * DOMException named TimeoutError); the job is left as it is.
   */
  waitFor(id: string, opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<JobWithAttempts>;
  /**
   * Cancels jobs (up to 1000), as the console's Cancel does: a queued or retrying job
   * is cancelled at once; a running one is asked to stop (`cancel_requested`: its handler's
   * signal aborts, and it ends cancelled unless it finishes first). A job already finished is
   * left alone, with why. Audited with actor kind `client` (the process's user@host, or
   * LEASEHOLD_ACTOR) and `reason`.
   */
  cancel(ids: string | readonly string[], opts?: { reason?: string }): Promise<ActionResult>;
  /**
   * Puts jobs back in their queue, due now, as the console's Requeue does (up to 1000): a
   * failed, cancelled or completed job, or one backing off before a retry. A running job is
   * left alone unless `revokeLease` (then its worker's writes are refused by the fence);
   * `resetAttempts` grants a whole fresh attempt budget. A completed job's result is deleted
   * (see `results`). Audited as cancel() is.
   */
  requeue(ids: string | readonly string[], opts?: { resetAttempts?: boolean; revokeLease?: boolean; reason?: string }): Promise<ActionResult>;
  /**
   * Moves waiting (queued or retrying) jobs, as the console's Reschedule does: `runAt` (a
   * time already past: now), `priority` (0 runs first … 9), or both; a job that runs or has
   * finished is left alone with why. Audited as cancel() is.
   */
  reschedule(ids: string | readonly string[], opts: { runAt?: Date | string; priority?: number; reason?: string }): Promise<ActionResult>;
  transaction(client: pg.PoolClient | pg.Client): Transaction;
  withTransaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  withTransaction<T>(pool: pg.Pool, fn: (tx: Transaction) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Validates one job exactly as POST /api/jobs does; throws LeaseholdError naming the field.
 * `types`: the job types accepted; by default the built-in ones (the client's own calls
 * pass knownJobTypes, which adds those the workers registered).
 */
export function validateJob(job: JobInput, where = '', types: KnownJobTypes = builtinJobTypes): EnqueueInput {
  const at = (f: string) => (where ? `${where}.${f}` : f);
  // What POST /api/jobs would receive: a Date as its ISO text, a payload as JSON. Both are
  // checked here, because toISOString and JSON.stringify would otherwise throw a bare
  // RangeError or TypeError (an invalid Date, a BigInt, a cycle) instead of naming the field.
  if (job.runAt instanceof Date && Number.isNaN(job.runAt.getTime())) {
    throw new QueueError('invalid_request', `${at('runAt')}: an invalid Date (its time is NaN)`);
  }
  if (job.payload !== undefined) {
    let text: string | undefined;
    try {
      text = JSON.stringify(job.payload);
    } catch (e) {
      // A payload nested thousands deep overflows the stack; the API would refuse it for its depth.
      if (e instanceof RangeError && /call stack/i.test(e.message)) throw new QueueError('invalid_request', `${at('payload')}: nested deeper than ${MAX_PAYLOAD_DEPTH} levels`);
      throw new QueueError('invalid_request', `${at('payload')}: cannot be sent as JSON (${(e as Error).message.split('\n')[0]})`);
    }
    if (text === undefined) throw new QueueError('invalid_request', `${at('payload')}: a ${typeof job.payload} is not a JSON value`);
  }
  const body = { ...job, runAt: job.runAt instanceof Date ? job.runAt.toISOString() : job.runAt };
  for (const k of Object.keys(body) as (keyof typeof body)[]) if (body[k] === undefined) delete body[k];
  const parsed = enqueueBody.safeParse(body);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    const at = [where, ...i.path.map(String)].filter(Boolean).join('.');
    throw new QueueError('invalid_request', `${at || 'job'}: ${i.message}`);
  }
  return toEnqueueInput(parsed.data, where, types);
}

/**
 * A database error of the client's own calls as the API would answer it: a LeaseholdError
 * 'unavailable' that says whether anything may have been written (so whether a retry is
 * safe), or that the database is not migrated; the original error as its `cause`. Anything
 * else (a bug) is thrown as it was.
 */
function asLeaseholdError(err: unknown, opts: { readOnly?: boolean } = {}): never {
  const known = knownQueueError(err, opts);
  if (!known || known === err) throw err;
  throw Object.assign(known, { cause: err });
}

/** The type names to look up before validating (whatever is not a string is refused by validateJob). */
const typeNames = (jobs: readonly JobInput[]) => jobs.map((j) => j?.type).filter((t): t is string => typeof t === 'string');

/** A doorbell that only remembers what to ring, until the transaction has committed. */
class DeferredDoorbell implements Doorbell {
  readonly usingRedis = false;
  pending: Ring[] = [];
  async ring(items: readonly Ring[]) {
    this.pending.push(...items);
  }
  async backlog() {
    return null;
  }
}

/** The statuses a job does not leave by itself (an operator's requeue aside). */
const FINISHED = new Set(['completed', 'failed', 'cancelled']);

export function createClient(opts: ClientOptions = {}): LeaseholdClient {
  const log = opts.logger ?? createLogger({ role: 'client' });
  const connectionString = opts.databaseUrl ?? process.env.DATABASE_URL;
  if (!opts.pool && !connectionString) {
    throw new QueueError('invalid_request', 'createClient: give databaseUrl or pool (or set DATABASE_URL)');
  }
  const ownPool = opts.pool ? null : createPool(connectionString!, { name: 'client', max: 5 });
  const pool = opts.pool ?? ownPool!;
  const prefix = opts.redisPrefix ?? process.env.LEASEHOLD_REDIS_PREFIX ?? 'leasehold';
  // A Redis URL that cannot be used is said here, before anything is written, not by the
  // first ring (after a COMMIT, in a transaction of the caller's).
  const redisSetting = opts.redisUrl === undefined ? process.env.REDIS_URL : opts.redisUrl;
  if (redisSetting && !redisDisabled(redisSetting) && !isRedisUrl(redisSetting)) {
    throw new QueueError('invalid_request', `createClient: ${opts.redisUrl === undefined ? 'REDIS_URL' : 'redisUrl'} is not a Redis URL (redis://host:port)`);
  }

  // The doorbell is made on first use: finding the default Redis takes a round trip, and
  // the first ring waits (briefly) for the connection so it does not fall back to NOTIFY.
  let doorbell: Promise<Doorbell> | null = null;
  const getDoorbell = () =>
    (doorbell ??= (async () => {
      const url = opts.redisUrl === null ? null : await resolveRedisUrl(opts.redisUrl ?? process.env.REDIS_URL);
      if (!url) return new PgDoorbell(pool, log);
      const bell = new RedisDoorbell(url, prefix, pool, log);
      await redisSettled(bell, 2_000);
      return bell;
    })());
  // The registered job types (none read for built-in ones), kept per client. Inside a
  // transaction they are read through its own connection: one more from the pool could wait
  // for ever on a pool that transactions like it hold whole.
  const validateOne = async (job: JobInput, db: Executor = pool) => validateJob(job, '', await knownJobTypes(db, typeNames([job]), { cacheFor: pool }));
  const validateAll = async (jobs: readonly JobInput[], db: Executor = pool) => {
    // From plain JavaScript too: an object or a string is a LeaseholdError naming it, not a TypeError.
    if (!Array.isArray(jobs)) throw new QueueError('invalid_request', `enqueueMany: give an array of jobs (${jobs === null ? 'null' : typeof jobs === 'object' ? 'an object' : `a ${typeof jobs}`} was given)`);
    const types = await knownJobTypes(db, typeNames(jobs), { cacheFor: pool });
    return jobs.map((j, k) => validateJob(j, `[${k}]`, types));
  };
  const ring = async (items: readonly Ring[]) => {
    if (items.length) await (await getDoorbell()).ring(items);
  };
  const results =
    opts.results !== undefined ? opts.results : new FsResultStore(resultsDir({ dataDir: process.env.LEASEHOLD_DATA_DIR || '.leasehold', resultsDir: process.env.LEASEHOLD_RESULTS_DIR || undefined }));

  /**
   * An operator's action on jobs by id, as the console runs it: the ids and the reason
   * checked as POST /api/actions/:action checks them, before anything is written (from plain
   * JavaScript too: a number or an object is refused with the field named, not a TypeError),
   * then the same lib/queue statement inside one audit entry (actor kind `client`).
   */
  async function act(
    verb: 'cancel' | 'requeue' | 'reschedule',
    given: unknown,
    reasonGiven: unknown,
    // The audit entry of these checked ids (a reschedule's records its due time as stored).
    entryOf: (ids: readonly string[], reason: string | null) => ReturnType<typeof jobActionEntry>,
    apply: (ids: readonly string[]) => Promise<ActionReport>,
  ): Promise<ActionResult> {
    if (typeof given !== 'string' && !Array.isArray(given)) throw new QueueError('invalid_request', `${verb}: give a job id or an array of them`);
    const ids: readonly unknown[] = typeof given === 'string' ? [given] : given;
    const bad = ids.find((id) => typeof id !== 'string' || !isJobIdText(id));
    if (bad !== undefined) throw new QueueError('invalid_request', `${verb}: ${typeof bad === 'string' ? JSON.stringify(bad.slice(0, 40)) : `a ${typeof bad}`} is not a job id`);
    if (ids.length === 0 || ids.length > MAX_BULK_IDS) throw new QueueError('invalid_request', `${verb}: give 1 to ${MAX_BULK_IDS} job ids (${ids.length} given)`);
    const reason = reasonText.safeParse(reasonGiven ?? '');
    if (!reason.success) throw new QueueError('invalid_request', `${verb}: reason: ${reason.error.issues[0]?.message ?? 'invalid'}`);
    const checked = ids as readonly string[];
    const { entry, outcome } = entryOf(checked, reason.data || null);
    const r = await audited(pool, { actor: processActor(), actorKind: 'client' }, entry, () => apply(checked), outcome).catch(asLeaseholdError);
    return { changed: r.changed, skipped: r.skipped, items: r.items.map(({ job: _job, ...item }) => item) };
  }

  /**
   * More than MAX_BULK_ENQUEUE jobs go in chunks inside one transaction, each chunk's key
   * locks held until COMMIT: the chunks are cut from the jobs in key order (the bytes of the
   * idempotency key, then of the singleton key, as the statement sorts within a chunk; a job
   * without one after those with it, in their order), so two such batches sharing keys take
   * their locks in the same order and wait for each other instead of deadlocking. Results come
   * back in input order.
   */
  async function insertMany(db: Executor, inputs: readonly EnqueueInput[], bell: Doorbell): Promise<EnqueueResult[]> {
    if (inputs.length <= MAX_BULK_ENQUEUE) return jobEnqueue(db, inputs, { doorbell: bell });
    const byKey = (x: string | null | undefined, y: string | null | undefined) =>
      x == null || y == null ? (x == null ? 1 : 0) - (y == null ? 1 : 0) : Buffer.compare(Buffer.from(x), Buffer.from(y));
    const order = inputs.map((_, k) => k);
    order.sort((a, b) => {
      const [x, y] = [inputs[a]!, inputs[b]!];
      return byKey(x.idempotencyKey, y.idempotencyKey) || byKey(x.singletonKey, y.singletonKey) || a - b;
    });
    const out: EnqueueResult[] = new Array(inputs.length);
    for (let k = 0; k < order.length; k += MAX_BULK_ENQUEUE) {
      const chunk = order.slice(k, k + MAX_BULK_ENQUEUE);
      const results = await jobEnqueue(db, chunk.map((i) => inputs[i]!), { doorbell: bell });
      chunk.forEach((i, j) => (out[i] = results[j]!));
    }
    return out;
  }

  /** A transaction handle, and how to insert jobs that were validated already. */
  function openTransaction(client: pg.PoolClient | pg.Client) {
    const deferred = new DeferredDoorbell();
    const insert = (inputs: readonly EnqueueInput[]) => insertMany(client, inputs, deferred);
    const tx: Transaction = {
      client,
      enqueue: async (job) => (await insert([await validateOne(job, client)]))[0]!,
      enqueueMany: async (jobs) => insert(await validateAll(jobs, client)),
      // Never throws: the jobs are committed, and a caller taking the error for a failed enqueue
      // would enqueue them again. Unrung, workers still find them (their PostgreSQL poll, the sweep).
      afterCommit: async () => {
        const items = deferred.pending.splice(0);
        try {
          await ring(items);
        } catch (err) {
          log.warn('the jobs are committed but the workers could not be rung: they find them by polling', { jobs: items.length, err });
        }
      },
    };
    return { tx, insert };
  }

  const transaction = (client: pg.PoolClient | pg.Client) => openTransaction(client).tx;

  async function inTransaction<T>(txPool: pg.Pool, fn: (t: ReturnType<typeof openTransaction>) => Promise<T>): Promise<T> {
    // The doorbell before anything is written: a Redis URL that cannot be used fails the call
    // here, with nothing committed, rather than after COMMIT (a caller retrying would then
    // enqueue every job twice).
    await getDoorbell();
    const client = await txPool.connect();
    let result: T;
    let t: ReturnType<typeof openTransaction>;
    try {
      await client.query('BEGIN');
      t = openTransaction(client);
      result = await fn(t);
      // A statement `fn` caught and went on from aborted the transaction: nothing was kept.
      if (!(await commit(client))) {
        throw new QueueError(
          'state_forbids',
          'the transaction was rolled back, not committed: a statement in it failed (its error was caught inside the callback); nothing it wrote was kept and no job was enqueued',
        );
      }
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
    await t.tx.afterCommit();
    return result;
  }

  function withTransaction<T>(a: pg.Pool | ((tx: Transaction) => Promise<T>), b?: (tx: Transaction) => Promise<T>): Promise<T> {
    const [txPool, fn] = typeof a === 'function' ? [pool, a] : [a, b!];
    return inTransaction(txPool, (t) => fn(t.tx));
  }

  async function get(id: string): Promise<JobWithAttempts | null> {
    // The API's check: a number too large for a bigint is no job (not an error from SQL).
    if (!isJobIdText(id)) return null;
    const d = await getJob(pool, id).catch((err) => asLeaseholdError(err, { readOnly: true }));
    if (!d) return null;
    const { payloadOmitted: _never, ...dto } = detailDto(d);
    return { ...dto, payloadText: d.payloadText! }; // read with its payload (getJob's default)
  }

  return {
    async enqueue(job) {
      // The validation reads the registered types of a type not built in: its errors too.
      const [r] = await validateOne(job)
        .then(async (input) => jobEnqueue(pool, [input], { doorbell: await getDoorbell() }))
        .catch(asLeaseholdError);
      return r!;
    },
    async enqueueMany(jobs) {
      const inputs = await validateAll(jobs).catch(asLeaseholdError);
      if (inputs.length === 0) return [];
      if (inputs.length <= MAX_BULK_ENQUEUE) return jobEnqueue(pool, inputs, { doorbell: await getDoorbell() }).catch(asLeaseholdError);
      return inTransaction(pool, (t) => t.insert(inputs)).catch(asLeaseholdError);
    },
    get,
    async waitFor(id, opts = {}) {
      const signals = [opts.signal, opts.timeoutMs === undefined ? undefined : AbortSignal.timeout(opts.timeoutMs)].filter((x) => x !== undefined);
      const signal = signals.length ? AbortSignal.any(signals) : undefined;
      for (let pause = 50; ; pause = Math.min(1_000, pause * 1.5)) {
        signal?.throwIfAborted();
        const d = await get(id);
        if (!d) throw new QueueError('not_found', `no job with id ${JSON.stringify(String(id).slice(0, 40))}`);
        if (FINISHED.has(d.job.status)) return d;
        await setTimeout(pause, undefined, { signal }).catch(() => signal!.throwIfAborted());
      }
    },
    cancel: (given, opts = {}) => act('cancel', given, opts.reason, (ids, reason) => jobActionEntry('cancel', ids, reason), (ids) => jobCancel(pool, { ids })),
    requeue: (given, opts = {}) => {
      const how = { resetAttempts: !!opts.resetAttempts, revokeLease: !!opts.revokeLease };
      return act('requeue', given, opts.reason, (ids, reason) => jobActionEntry('requeue', ids, reason, how), async (ids) => jobRequeue(pool, { ids, ...how, doorbell: await getDoorbell(), results }));
    },
    async reschedule(given, opts) {
      // Checked as POST /api/jobs/:id/reschedule checks its body; a Date as its ISO text.
      const at = opts?.runAt;
      if (at instanceof Date && Number.isNaN(at.getTime())) throw new QueueError('invalid_request', 'reschedule: runAt: an invalid Date (its time is NaN)');
      const body = rescheduleBody.safeParse({ runAt: at instanceof Date ? at.toISOString() : at, priority: opts?.priority });
      if (!body.success) {
        const i = body.error.issues[0]!;
        throw new QueueError('invalid_request', `reschedule: ${[...i.path.map(String), i.message].join(': ')}`);
      }
      const { runAt, priority } = body.data;
      return act(
        'reschedule',
        given,
        opts.reason,
        (ids, reason) => rescheduleEntry(ids, reason, runAt, priority),
        async (ids) => jobReschedule(pool, { ids, runAt, priority, doorbell: await getDoorbell() }),
      );
    },
    transaction,
    withTransaction: withTransaction as LeaseholdClient['withTransaction'],
    async close() {
      // A doorbell that could not be made (a bad Redis URL, already reported) must not keep the pool open.
      const bell = doorbell ? await doorbell.catch(() => null) : null;
      if (bell instanceof RedisDoorbell) await bell.close();
      await ownPool?.end();
    },
  };
}
