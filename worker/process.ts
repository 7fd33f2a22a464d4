/**
 * One worker process, forked by the supervisor (worker/supervisor.ts). It runs until
 * SIGTERM/SIGINT or until its parent goes away, then stops gracefully: no new claims,
 * running jobs get the grace period, leftover leases are handed back.
 *
 * Arguments come from the supervisor: --concurrency C --queues a,b. DATABASE_URL and
 * REDIS_URL (or REDIS_URL=off) are always set by the supervisor.
 */
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig, redisDisabled } from '../lib/config';
import { createPool } from '../lib/db/client';
import { type JobTypeSpec, jobTypes } from '../lib/job-types';
import { createLogger } from '../lib/log';
import { outliveLostOutput } from './lost-output.mjs';
import { type Doorbell, PgDoorbell, RedisDoorbell, RedisReceiver } from '../lib/queue/signal';
import * as ops from '../lib/queue/ops';
import { FsResultStore, resultsDir } from '../lib/results';
import { HandlersModuleError, loadHandlers } from './handlers';
import { Runner } from './runner';
import { EXIT_CONFIG } from './exit-codes';
import { QueueError } from '../lib/queue/errors';

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '10' },
    queues: { type: 'string', default: 'default' },
    prefetch: { type: 'string', default: '0' },
  },
});

const cfg = loadConfig();
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('worker process: DATABASE_URL must be set by the supervisor');
const redisUrl = redisDisabled(process.env.REDIS_URL) ? null : (process.env.REDIS_URL ?? null);
const concurrency = Number(values.concurrency);
// Each once: a queue named twice would be claimed from twice over (and its candidates counted twice).
const queues = [...new Set(values.queues!.split(',').map((q) => q.trim()).filter(Boolean))];

const log = createLogger({ proc: process.env.LEASEHOLD_WORKER_INDEX ?? '0', pid: process.pid });
outliveLostOutput();
lowerPriority(cfg.workerNice);
// No statement of the worker waits longer than a lease, and no transaction of it sits idle
// longer on the server. A connection can go quiet (a NAT forgetting the flow: no FIN, no
// RST; TCP notices after ~15 min of retransmissions, an idle one after ~2 h of keepalive).
// Client side, a finished job's completion would wait on it that long while the heartbeats,
// on their own pool, keep renewing the lease: it times out instead, the connection is
// discarded and the completion retried on a new one. Server side, a transaction left open on
// it would hold its locks as long (a controlled queue's lock stops that queue's claims on
// every host): the server ends the session instead. And the server gives up on a statement
// a little before the client does: a claim held up on a locked row past the client's wait
// would otherwise commit later, unseen (the runner looked for its jobs when it gave up, and
// found none yet), leasing its jobs to this worker with a lease already run out — each then
// charged an attempt it never ran, and a job on its last attempt dead-lettered unrun.
/** A server-side statement_timeout a tenth (at most a second) short of the client's `ms`. */
const serverGivesUpBefore = (ms: number) => ms - Math.min(1_000, Math.round(ms / 10));
const pool = createPool(databaseUrl, {
  name: 'worker',
  max: Math.min(concurrency, 8) + 2,
  queryTimeoutMs: cfg.leaseMs,
  settings: {
    idle_in_transaction_session_timeout: String(cfg.leaseMs),
    statement_timeout: String(serverGivesUpBefore(cfg.leaseMs)),
  },
});
// The server gives up before the client does: a renewal the runner stopped waiting for must
// not commit later, extending the lease of a job it may already have let go. (The client's
// clock starts when the statement is sent, the server's when it arrives: equal timeouts let a
// slow renewal commit after the runner gave up on it.)
const heartbeatPool = createPool(databaseUrl, {
  name: 'heartbeat',
  max: 2,
  queryTimeoutMs: cfg.heartbeatMs,
  settings: { statement_timeout: String(serverGivesUpBefore(cfg.heartbeatMs)) },
});
const doorbell: Doorbell = redisUrl ? new RedisDoorbell(redisUrl, cfg.redisPrefix, pool, log) : new PgDoorbell(pool, log);
const receiver = redisUrl ? new RedisReceiver(redisUrl, cfg.redisPrefix, log) : null;
if (receiver) await receiver.ready(2_000);

/**
 * The handlers module cannot be run as written (missing, a bad export, an invalid declaration
 * or schedule): said once, and the process exits EXIT_CONFIG, which the supervisor does not
 * restart but stops on — a replacement would refuse it the same way, for ever.
 */
function refuseModule(err: unknown): never {
  log.error('the handlers module cannot be used: fix it and start the workers again', {
    module: cfg.handlersModule,
    reason: err instanceof Error ? err.message : String(err),
  });
  process.exit(EXIT_CONFIG);
}
// Refused for what the module says (HandlersModuleError); anything else its loading throws (its
// own top-level code meeting a database away) is a crash like any other, and the process is replaced.
const { handlers, schedules, registrations, backoffs } = await loadHandlers(cfg.handlersModule).catch((err) => {
  if (err instanceof HandlersModuleError) refuseModule(err);
  throw err;
});
// Before the first claim: producers accept this module's types from now on (lib/job-types.ts).
await ops.jobTypesRegister(pool, registrations);
// A schedule in code is its whole definition: one that leaves `enabled` out is on, and one
// that leaves `overlap` out allows overlapping runs. One the definition check refuses (a bad
// cron or zone) is the module's fault; any other error (the database away) is not.
for (const schedule of schedules) {
  await ops.scheduleUpsert(pool, { ...schedule, enabled: schedule.enabled ?? true, overlap: schedule.overlap ?? 'allow' }).catch((err) => {
    if (err instanceof QueueError && err.code === 'invalid_request') {
      refuseModule(err.message.startsWith('schedule ') ? err : new Error(`schedule ${JSON.stringify(schedule.name)}: ${err.message}`));
    }
    throw err;
  });
}
// Each type's own time limit, looked up once per job run (LEASEHOLD_JOB_TIMEOUT_MS for the rest).
const typeTimeouts = new Map<string, number | null | undefined>([
  ...Object.entries(jobTypes as Record<string, JobTypeSpec>).map(([type, spec]) => [type, spec.timeoutMs] as const),
  ...registrations.map((r) => [r.name, r.timeoutMs] as const),
]);
const runner = new Runner({
  pool,
  heartbeatPool,
  databaseUrl,
  receiver,
  doorbell,
  handlers,
  timeoutFor: (type) => typeTimeouts.get(type) ?? cfg.jobTimeoutMs,
  backoffFor: (type) => backoffs.get(type),
  results: new FsResultStore(resultsDir(cfg)),
  queues,
  concurrency,
  leaseMs: cfg.leaseMs,
  heartbeatMs: cfg.heartbeatMs,
  pollMs: cfg.pollMs,
  recoverMs: cfg.recoverMs,
  signalGraceMs: cfg.signalGraceMs,
  retention: cfg.retention,
  prefetch: Number(values.prefetch),
  // Jobs claimed ahead are kept on file for the supervisor, which gives back their attempts if this process is killed.
  ledgerFile: Number(values.prefetch) > 0 ? process.env.LEASEHOLD_HELD_FILE : undefined,
  startQuiet: !!process.env.LEASEHOLD_START_QUIET,
  // Resumed after a quiet: the supervisor's processes started from now on claim too.
  onResumed: () => tellSupervisor({ type: 'resumed', seq: quietSeq }),
  log,
});
// The supervisor's SIGTSTP (worker/bin/worker.ts) quiets this process, as the workers page's
// Quiet does and with the same statement (audited, shown there, undone by Resume): it claims
// no new job, those in hand finish. A request that comes while the process starts (or one it
// was started with) claims nothing from the start and is recorded once it has started (below).
type QuietRequest = { why: string; seq: number };
let quietRequest: QuietRequest | null = process.env.LEASEHOLD_START_QUIET
  ? { why: process.env.LEASEHOLD_START_QUIET, seq: Number(process.env.LEASEHOLD_START_QUIET_SEQ) || 0 }
  : null;
/**
 * The supervisor's number of the quiet request in force here, which its 'resumed' names. Set
 * once the request is written, not as it arrives: a heartbeat read between an operator's
 * Resume and a newer request says "resumed" of the older one, and must not call off the newer.
 */
let quietSeq = 0;
let started = false;
process.on('message', (m: { type?: string; why?: string; seq?: number }) => {
  if (m?.type !== 'quiet') return;
  const request = { why: String(m.why ?? 'the supervisor'), seq: Number(m.seq) || 0 };
  if (started) return void quietBySupervisor(request);
  quietRequest = request;
  runner.pinQuiet();
});
// A rejection nobody handles comes from handler code (a ctx.checkpoint not awaited, a promise
// left behind). Node's default would end this process and every job it runs, each then
// waiting out its lease and spending an attempt; the rejection is logged instead (whatever
// that promise tried to write was fenced).
process.on('unhandledRejection', (reason) =>
  log.error("a promise rejection nobody handled (a handler's promise not awaited?); the worker keeps running", { err: reason }),
);
// Signals from here on drain the process (shutdown waits for the start first): Node's
// default would end it mid-start, its row registered, and its supervisor would record
// "killed by SIGTERM" for a process stopped as asked.
let stopping = false;
const starting = runner.start();
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
// A terminal that hangs up sends SIGHUP to the whole foreground job, this process too:
// Node's default would end it at once, its jobs left running until their leases ran out.
process.on('SIGHUP', () => void shutdown('SIGHUP'));
await starting;
log.info('worker process started', { worker: runner.workerId, concurrency, queues: queues.join(','), redis: !!redisUrl });
// Forked by a supervisor that went away while this process started: its 'disconnect' came
// before the handler below (and a send on the closed channel would throw), so stop now.
if (process.send && !process.connected) setImmediate(() => void shutdown('supervisor went away during start'));
else tellSupervisor({ type: 'ready', workerId: runner.workerId });
// A beat from the event loop: the supervisor kills a process whose loop has been blocked
// for two leases (a handler that never yields), which otherwise would hold its slot, run no
// sweep and be replaced by no one, for ever.
if (process.send) setInterval(() => tellSupervisor({ type: 'alive' }), 500).unref();

/**
 * A message to the supervisor, if there is one. A supervisor killed with SIGKILL closes the
 * channel before this process has read its end (a handler held the event loop, and the
 * overdue beat runs first): the send then fails with EPIPE, which, with no callback, Node
 * raises as an 'error' on `process` — unhandled, it ended the process there and then, its
 * jobs left running under its id until their leases ran out. The failure is dropped: the
 * 'disconnect' that follows drains the process.
 */
function tellSupervisor(message: { type: string; workerId?: string; seq?: number }) {
  if (process.send && process.connected) process.send(message, (err: Error | null) => void err);
}

async function shutdown(why: string) {
  if (stopping) return;
  stopping = true;
  log.info('stopping: no new claims, running jobs get the grace period', { why, graceMs: cfg.shutdownGraceMs });
  // A start that fails ends the process on its own (the top-level await throws): nothing to stop.
  if (!(await starting.then(() => true, () => false))) return;
  await runner.stop(cfg.shutdownGraceMs);
  // The supervisor reads and removes a process's held-ledger file when it ends; with no
  // supervisor left to (it was killed, or went away), the file would stay in the temp
  // directory for good, read by no one.
  const ledger = process.env.LEASEHOLD_HELD_FILE;
  if (process.send && !process.connected && ledger) for (const f of [ledger, `${ledger}.next`]) fs.rmSync(f, { force: true });
  receiver?.close();
  if (doorbell instanceof RedisDoorbell) await doorbell.close();
  await Promise.allSettled([pool.end(), heartbeatPool.end()]);
  log.info('worker process stopped', { ...runner.stats });
  process.exit(0);
}
process.on('disconnect', () => void shutdown('supervisor went away'));

async function quietBySupervisor({ why, seq }: QuietRequest) {
  if (stopping) return;
  const actor = { actor: why, actorKind: 'system' as const };
  try {
    // Loaded here: a worker never quieted this way does not carry the audit code.
    const { auditedWorkerQuiet } = await import('../lib/audit/log');
    const r = await auditedWorkerQuiet(pool, actor, { workerId: runner.workerId, quiet: true });
    // Never back: two requests' writes may finish out of order.
    quietSeq = Math.max(quietSeq, seq);
    runner.quietNow(r.quietToken);
    if (r.changed) log.info('quieted: claiming no new jobs; those in hand finish (Resume on the workers page undoes it)', { why });
  } catch (err) {
    runner.unpinQuiet();
    log.warn('could not quiet this worker (it claims on)', { why, err });
  }
}
// Quieted while it started (or started so by a supervisor already quieted): claiming nothing
// since, it records why now that its row exists.
started = true;
if (quietRequest) void quietBySupervisor(quietRequest);

/**
 * Below the console (LEASEHOLD_WORKER_NICE, lib/config.ts): while nothing else wants the
 * CPU the drain runs as fast, and when the console answers an operator it goes first.
 * Only ever lowered: a process started lower (`nice -n 15 npm run worker`) stays there.
 * On Linux a nice value belongs to a thread, and the threads V8 started before this line
 * (garbage collection, compilation) would keep theirs: each is lowered too. Threads
 * started later inherit it.
 */
function lowerPriority(nice: number) {
  if (nice === 0) return; // off: not even a process started above the default is touched
  let threads: number[] = [0];
  try {
    threads = fs.readdirSync('/proc/self/task').map(Number);
  } catch {
    // Not Linux: the process has one priority.
  }
  for (const tid of threads) {
    try {
      if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
    } catch (err) {
      // A thread that has just exited is gone from the list; anything else is worth a word.
      if ((err as { info?: { code?: string } }).info?.code !== 'ESRCH') log.warn('could not lower the worker process priority', { nice, tid, err });
    }
  }
}
