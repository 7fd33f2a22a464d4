/**
 * Configuration from the environment, parsed once with zod. Names and defaults are part
 * of the public contract (../shared/CONTRACT.md); invalid values stop the process with a
 * message naming the variable.
 */
import { giveUpAfterMs } from './lease';
import { logUrlTemplateProblem } from './log-links';
import { z } from 'zod';

export const LEASE_MS_DEFAULT = 30_000;
/** How often the recover sweep runs in each worker process (one at a time cluster-wide). */
export const RECOVER_INTERVAL_MS_DEFAULT = 5_000;
/** How long a worker blocks on the doorbell before it polls PostgreSQL anyway. */
export const POLL_INTERVAL_MS_DEFAULT = 2_000;
/** Grace before a due, waiting job counts as missing its doorbell. */
export const SIGNAL_GRACE_MS_DEFAULT = 1_000;
/** Most ids one recover sweep pushes to Redis per queue: a backlog never floods it. */
export const SIGNAL_REPAIR_CAP_DEFAULT = 1_000;
/**
 * How long a stopping worker lets running jobs finish before it hands their leases back.
 * Under docker stop's 10 s (and Kubernetes' 30 s) before SIGKILL: at 10 s the hand-back
 * would race the kill, and jobs it missed would wait out their leases and spend an attempt.
 */
export const SHUTDOWN_GRACE_MS_DEFAULT = 8_000;
export const PORT_DEFAULT = 3000;
/**
 * The CPU priority (nice value) worker processes lower themselves to; 0 leaves it alone.
 * Above 0 the console answers first while a drain keeps every core busy (its median a
 * quarter to a third lower at 10), but each time it does it stalls the workers, and
 * PostgreSQL's work behind them: ten consoles cost the drain about 10 points more
 * (README, "Watching while the workers drain"). Off by default; an operator who wants
 * the console first sets it.
 */
export const WORKER_NICE_DEFAULT = 0;

const intMs = (min: number, max: number) =>
  z.coerce
    .number({ error: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(min, `must be at least ${min} (milliseconds)`)
    .max(max, `must be at most ${max} (milliseconds)`);

/**
 * How long finished jobs stay (with their attempts) before the recover sweep deletes them:
 * completed and cancelled ones a week, failed ones — the dead letter, an operator's to
 * triage — until someone deletes them. 0 keeps them for ever. (River keeps completed jobs
 * a day; BullMQ and Sidekiq keep what they are told to.)
 */
export const KEEP_COMPLETED_MS_DEFAULT = 7 * 86_400_000;
export const KEEP_CANCELLED_MS_DEFAULT = 7 * 86_400_000;
export const KEEP_FAILED_MS_DEFAULT = 0;
const keepMs = intMs(0, 3650 * 86_400_000);

const schema = z
  .object({
    // What pg takes: a postgres:// URL (a socket's too: postgres://user@/db?host=/run/postgresql),
    // socket:…, or a socket directory. Anything else ("not-a-url") said as such here, not later
    // as a host named "base" that cannot be found.
    DATABASE_URL: z
      .string()
      .refine(
        (v) => /^(postgres(ql)?:\/\/|socket:|\/)/i.test(v.trim()),
        'must be a postgres:// (or postgresql://) URL, e.g. postgres://user:password@127.0.0.1:5432/leasehold',
      )
      .optional(),
    // A redis:// or rediss:// URL with a host and a port that is a port, or off: a typo said
    // here, not later as a stack from the Redis client.
    REDIS_URL: z
      .string()
      .refine((v) => redisDisabled(v) || isRedisUrl(v), 'must be a redis:// (or rediss://) URL, e.g. redis://127.0.0.1:6379, or off')
      .optional(),
    PORT: z.coerce.number().int().min(1).max(65535).default(PORT_DEFAULT),
    LEASEHOLD_LEASE_MS: intMs(200, 86_400_000).default(LEASE_MS_DEFAULT),
    LEASEHOLD_HEARTBEAT_MS: intMs(50, 86_400_000).optional(),
    LEASEHOLD_RECOVER_MS: intMs(100, 86_400_000).default(RECOVER_INTERVAL_MS_DEFAULT),
    LEASEHOLD_POLL_MS: intMs(50, 600_000).default(POLL_INTERVAL_MS_DEFAULT),
    LEASEHOLD_SIGNAL_GRACE_MS: intMs(0, 600_000).default(SIGNAL_GRACE_MS_DEFAULT),
    LEASEHOLD_SHUTDOWN_GRACE_MS: intMs(0, 3_600_000).default(SHUTDOWN_GRACE_MS_DEFAULT),
    LEASEHOLD_WORKER_NICE: z.coerce.number().int().min(0).max(19).default(WORKER_NICE_DEFAULT),
    LEASEHOLD_JOB_TIMEOUT_MS: intMs(0, 30 * 86_400_000).default(0),
    LEASEHOLD_KEEP_COMPLETED_MS: keepMs.default(KEEP_COMPLETED_MS_DEFAULT),
    LEASEHOLD_KEEP_CANCELLED_MS: keepMs.default(KEEP_CANCELLED_MS_DEFAULT),
    LEASEHOLD_KEEP_FAILED_MS: keepMs.default(KEEP_FAILED_MS_DEFAULT),
    LEASEHOLD_REDIS_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,64}$/)
      .default('leasehold'),
    LEASEHOLD_DATA_DIR: z.string().min(1).default('.leasehold'),
    /** Where job results are stored (filesystem result store); default <data dir>/results. */
    LEASEHOLD_RESULTS_DIR: z.string().min(1).optional(),
    // Empty is unset (the default, info), as lib/log.ts reads it.
    LEASEHOLD_LOG: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['debug', 'info', 'warn', 'error'], { error: 'must be debug, info, warn or error' }).optional()),
    /** A module whose `handlers` export adds job handlers to the built-in ones. */
    LEASEHOLD_HANDLERS: z.string().min(1).optional(),
    /** A link from each attempt on a job's page to its logs: a URL template (lib/log-links.ts). Empty is unset. */
    LEASEHOLD_LOG_URL: z.preprocess(
      (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
      z
        .string()
        .trim()
        .max(4_000, 'at most 4000 characters')
        .superRefine((v, ctx) => {
          const problem = logUrlTemplateProblem(v);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .optional(),
    ),
    /** Payload keys hidden from viewers, comma-separated (lib/http/redact.ts). */
    LEASEHOLD_REDACT_KEYS: z
      .string()
      .default('')
      .transform((v) => v.split(',').map((k) => k.trim()).filter(Boolean))
      .pipe(z.array(z.string().max(200, 'a key name of at most 200 characters')).max(200, 'at most 200 key names')),
  })
  .transform((e) => {
    const heartbeatMs = e.LEASEHOLD_HEARTBEAT_MS ?? Math.max(50, Math.floor(e.LEASEHOLD_LEASE_MS / 3));
    return {
      databaseUrl: e.DATABASE_URL,
      /** undefined = try redis://127.0.0.1:6379; '' / 'off' / 'none' = run without Redis. */
      redisUrl: e.REDIS_URL,
      port: e.PORT,
      leaseMs: e.LEASEHOLD_LEASE_MS,
      heartbeatMs,
      recoverMs: e.LEASEHOLD_RECOVER_MS,
      pollMs: e.LEASEHOLD_POLL_MS,
      signalGraceMs: e.LEASEHOLD_SIGNAL_GRACE_MS,
      shutdownGraceMs: e.LEASEHOLD_SHUTDOWN_GRACE_MS,
      workerNice: e.LEASEHOLD_WORKER_NICE,
      /** How long a handler may run, for types without their own timeoutMs (0: no limit). */
      jobTimeoutMs: e.LEASEHOLD_JOB_TIMEOUT_MS,
      /** Finished jobs kept per status (null: for ever); the recover sweep deletes older ones. */
      retention: {
        completedMs: e.LEASEHOLD_KEEP_COMPLETED_MS || null,
        failedMs: e.LEASEHOLD_KEEP_FAILED_MS || null,
        cancelledMs: e.LEASEHOLD_KEEP_CANCELLED_MS || null,
      },
      redisPrefix: e.LEASEHOLD_REDIS_PREFIX,
      dataDir: e.LEASEHOLD_DATA_DIR,
      resultsDir: e.LEASEHOLD_RESULTS_DIR,
      handlersModule: e.LEASEHOLD_HANDLERS,
      redactKeys: e.LEASEHOLD_REDACT_KEYS,
      /** URL template of an attempt's logs (null: no link). */
      logUrl: e.LEASEHOLD_LOG_URL ?? null,
    };
  })
  .superRefine((c, ctx) => {
    if (c.heartbeatMs < giveUpAfterMs(c)) return;
    ctx.addIssue({
      code: 'custom',
      message:
        `LEASEHOLD_HEARTBEAT_MS (${c.heartbeatMs} ms) must be shorter than LEASEHOLD_LEASE_MS less a twentieth of it and a watchdog tick ` +
        `(${giveUpAfterMs(c)} ms of ${c.leaseMs}), or a worker gives its jobs up between renewals`,
    });
  });

export type Config = z.output<typeof schema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || 'config'}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
/** Whether `url` is a usable Redis URL: redis:// or rediss://, a host, a port that is a port. */
export function isRedisUrl(url: string): boolean {
  // The URL parser drops spaces around it; the Redis client does not, and throws.
  if (url.trim() !== url) return false;
  try {
    const u = new URL(url);
    return (u.protocol === 'redis:' || u.protocol === 'rediss:') && !!u.hostname;
  } catch {
    return false;
  }
}

export const redisDisabled = (url: string | undefined) => url !== undefined && ['', 'off', 'none'].includes(url.trim());
