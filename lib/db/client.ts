/**
 * PostgreSQL connections. One pool per process (cached on globalThis so Next's dev
 * reloads do not leak pools). Every pool and client has an error listener: a server
 * restart must log, not crash the process (node-postgres emits 'error' on idle clients).
 */
import pg from 'pg';
import { log } from '../log';

/** How long a connection may take to be made: a server that accepts and never answers is given up on. */
export const CONNECT_TIMEOUT_MS = 10_000;

export type Executor = Pick<pg.Pool | pg.PoolClient | pg.Client, 'query'>;

export interface PoolOptions {
  max?: number;
  /** For logs: what this pool is for. */
  name?: string;
  /** Server-side statement_timeout in ms for every statement on this pool (console reads). */
  statementTimeoutMs?: number;
  /** Client-side timeout for a query, after which it rejects (heartbeats must not hang). */
  queryTimeoutMs?: number;
  applicationName?: string;
  /**
   * Session settings for every connection, e.g. { jit: 'off' }: set by a statement when the
   * connection opens (queued ahead of its first query), not as startup options, which
   * PgBouncer and other poolers refuse.
   */
  settings?: Record<string, string>;
}

const DURABLE_COMMITS = `SELECT CASE WHEN current_setting('synchronous_commit') = 'off' THEN set_config('synchronous_commit', 'on', false) END`;

export function createPool(connectionString: string, opts: PoolOptions = {}): pg.Pool {
  const settings = Object.entries({
    ...(opts.statementTimeoutMs !== undefined ? { statement_timeout: String(opts.statementTimeoutMs) } : {}),
    ...opts.settings,
  });
  // Run by the pool before it hands the new connection out (pg-pool's onConnect hook):
  // nothing can overlap them on that connection. The settings in one statement, which the
  // server may refuse (then the connection goes on without them).
  const calls = settings.map((_, k) => `set_config($${2 * k + 1}, $${2 * k + 2}, false)`).join(', ');
  const onConnect = async (c: pg.ClientBase) => {
    c.on('error', (e) => log.debug('postgres client error', { pool: opts.name, err: e }));
    if (settings.length) {
      await c.query(`SELECT ${calls}`, settings.flat()).catch((err) => {
        // Refused by the server: go on without them. Timed out or lost: the pool drops the connection.
        if (!(err instanceof pg.DatabaseError)) throw err;
        log.warn('session settings were refused; going on without them', { pool: opts.name, settings: Object.fromEntries(settings), err });
      });
    }
    // Every transition must be durable when it returns (a claim lost in a crash can hand one
    // attempt number out twice; an acknowledged enqueue must survive): a server, database or
    // role default of synchronous_commit = off is overridden for our sessions (the other
    // values all flush the local WAL before the commit returns, and are kept). On its own,
    // and not excused: a connection that cannot be made durable is never handed out.
    await c.query(DURABLE_COMMITS);
  };
  const pool = new pg.Pool({
    connectionString,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? `leasehold${opts.name ? ':' + opts.name : ''}`,
    query_timeout: opts.queryTimeoutMs,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    idleTimeoutMillis: 30_000,
    onConnect,
  });
  pool.on('error', (e) => log.warn('postgres connection error (will reconnect)', { pool: opts.name, err: e }));
  return pool;
}

/** The server answered this error: the statement ended there (rolled back), nothing is left in doubt. */
export const answeredByServer = (err: unknown): boolean => err instanceof pg.DatabaseError;

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01', // admin shutdown
  '57P03', // cannot connect now (starting up)
  '3D000', // database does not exist
  '28P01', // password authentication failed
  '28000', // invalid authorization
  '53300', // too many connections
]);

/** Whether an error means "could not reach (or use) the database". */
export function isUnreachable(err: unknown): boolean {
  const e = err as { code?: string; message?: string; errors?: unknown[] };
  if (e?.code && UNREACHABLE_CODES.has(e.code)) return true;
  if (Array.isArray(e?.errors) && e.errors.some(isUnreachable)) return true;
  return /timeout exceeded when trying to connect|Connection terminated (unexpectedly|due to connection timeout)/i.test(e?.message ?? '');
}

/**
 * COMMIT, and whether it committed: PostgreSQL answers the COMMIT of a transaction an error
 * aborted (one the caller caught and went on from) with ROLLBACK, not with an error.
 */
export async function commit(client: pg.ClientBase): Promise<boolean> {
  return (await client.query('COMMIT')).command !== 'ROLLBACK';
}

/**
 * Runs `fn` on one connection of the pool, then gives the connection back. After an error
 * the server answered, the connection works: it is rolled back and reused. After any other
 * (a timeout, a lost connection, or an error of `fn`'s own) it is discarded: node-postgres
 * leaves a timed-out query active, so every later query on the connection would wait behind
 * it, and closing the connection ends its transaction on the server.
 */
export async function useConnection<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    const out = await fn(client);
    client.release();
    return out;
  } catch (err) {
    if (!answeredByServer(err)) client.release(err instanceof Error ? err : new Error(String(err)));
    else client.release(await client.query('ROLLBACK').then(() => undefined, (e: Error) => e));
    throw err;
  }
}

/**
 * A pool (each statement its own transaction) rather than one connection (perhaps inside
 * its caller's transaction). By its shape, not instanceof: a class seen through two module
 * copies (Next's route bundles) is two classes.
 */
export const isPool = (db: Executor): db is pg.Pool =>
  typeof (db as pg.Pool).connect === 'function' && typeof (db as pg.Pool).totalCount === 'number';

/**
 * Runs `read` on one snapshot of the database: a pool lends a connection (useConnection: a
 * broken one is dropped, not reused) for a REPEATABLE READ, READ ONLY transaction, so every
 * statement of `read` sees the same rows and the same now(). A single connection is used as
 * it is (a caller's transaction is its own affair).
 */
export async function onOneSnapshot<T>(db: Executor, read: (db: Executor) => Promise<T>): Promise<T> {
  if (!isPool(db)) return read(db);
  return useConnection(db, async (client) => {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const out = await read(client);
    await client.query('COMMIT');
    return out;
  });
}

/** useConnection inside BEGIN … COMMIT: an error rolls the transaction back (or drops the connection). */
export function useTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return useConnection(pool, async (client) => {
    await client.query('BEGIN');
    const out = await fn(client);
    if (!(await commit(client))) throw new Error('the transaction was rolled back, not committed: a statement in it failed');
    return out;
  });
}

const globalPools = globalThis as unknown as { __leaseholdPools?: Map<string, pg.Pool> };

/** The process-wide pool for a purpose (e.g. 'web'), created on first use. */
export function sharedPool(name: string, connectionString: string, opts: PoolOptions = {}): pg.Pool {
  globalPools.__leaseholdPools ??= new Map();
  const key = `${name}|${connectionString}`;
  let pool = globalPools.__leaseholdPools.get(key);
  if (!pool) {
    pool = createPool(connectionString, { name, ...opts });
    globalPools.__leaseholdPools.set(key, pool);
  }
  return pool;
}
