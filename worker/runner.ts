/**
 * One worker process's engine: up to `concurrency` handlers at once, fed by the doorbell
 * (or by polling PostgreSQL), each job held under a lease that a heartbeat renews.
 *
 * The loops, and why each exists:
 *  - fetch: waits for a free slot, pops ids from Redis (blocking only when nothing is
 *    waiting), claims them with the CAS; polls PostgreSQL when the pop times out, when
 *    Redis is unreachable, and while PostgreSQL keeps returning full batches (a backlog
 *    whose doorbells were lost, e.g. after a Redis flush).
 *  - heartbeat: renews every lease this process holds in one fenced statement. A lease
 *    missing from the answer is lost (taken over, revoked): abort that handler and never
 *    write its result. An *error* (database unreachable) is not a loss: keep working
 *    until the lease nearly ends by our own monotonic clock (a twentieth of it and a
 *    watchdog tick before), then abort, before the database may hand the job on.
 *  - recover: the cluster-wide sweep (one process at a time), at start and periodically.
 *
 * Every write about a job carries its fence (worker id + attempt), so whatever this
 * process believes, it can never overwrite an outcome that is no longer its to write.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { answeredByServer, useTransaction } from '../lib/db/client';
import { giveUpAfterMs, leaseGuardMs, watchdogPeriodMs } from '../lib/lease';
import { armed, failpoint, failpointsEnabled, isSkipped } from '../lib/failpoints';
import type { ResultStore } from '../lib/results';
import type { Logger } from '../lib/log';
import { attemptInBudget, type BackoffOptions, backoffMs } from '../lib/queue/backoff';
import { handlerVerdict, PermanentError } from '../lib/queue/errors';
import { type ClaimedJob, isSuspect, type Lease } from '../lib/queue/job';
import type { AttemptOutcome, JobStatus } from '../lib/queue/status';
import * as ops from '../lib/queue/ops';
import { type Doorbell, PgReceiver, RedisReceiver, type Ring, SignalUnavailable } from '../lib/queue/signal';
import { Histogram } from '../lib/queue/histogram';
import { type JobKind, TypeTally, type TypeOutcome } from '../lib/queue/type-metrics';
import { jsonProblem } from '../lib/queue/text';
import { addReport } from '../lib/queue/worker-totals';
import { Batcher } from './batcher';
import { HeldLedger } from './held-ledger';
import type { Handler, JobContext } from './handlers/types';

export interface RunnerOptions {
  /** Claims, completions and the recover sweep. */
  pool: pg.Pool;
  /** Heartbeats only, so a busy main pool can never delay a renewal. */
  heartbeatPool: pg.Pool;

  /** For the LISTEN connection of the Postgres-only mode. */
  databaseUrl: string;
  /** null = no Redis: claim from PostgreSQL only. */
  receiver: RedisReceiver | null;
  doorbell: Doorbell;
  handlers: Record<string, Handler>;
  /** Where handler results go (null: results are not kept). */
  results?: ResultStore | null;
  /** Finished jobs older than these windows are deleted by the sweeps this process runs (absent: all kept). */
  retention?: ops.Retention | null;
  queues: readonly string[];
  concurrency: number;
  leaseMs: number;
  heartbeatMs: number;
  pollMs: number;
  recoverMs: number;
  signalGraceMs: number;
  /**
   * Jobs claimed ahead of free slots and held (under renewed leases) in a local buffer, so
   * a claim statement carries many jobs. Default 0: claim only what free slots can run.
   * The cost: a crashed process delays up to concurrency + prefetch jobs until their
   * leases expire.
   */
  prefetch?: number;
  /**
   * Start quiet, claiming nothing, and stay so whatever heartbeats answer until quietNow()
   * (the request written) or unpinQuiet() (it could not be): a process its supervisor starts
   * after a SIGTSTP (worker/supervisor.ts).
   */
  startQuiet?: boolean;
  /**
   * Called when an operator resumes this process after a quiet it had acknowledged (a
   * heartbeat brought the resume): its supervisor then starts new processes claiming.
   */
  onResumed?: () => void;
  /** How long a job claimed ahead may wait for a slot before it is handed back (default PREFETCH_HOLD_MS). */
  prefetchHoldMs?: number;
  /** A file to keep the jobs claimed ahead and not started in, for the supervisor (held-ledger.ts; none without it). */
  ledgerFile?: string;
  /** How long ids popped beyond the free slots may wait in the process (see Runner.held). */
  heldSignalsMs?: number;
  /** How long an aborted handler that ignores its signal keeps its slot (default: the lease). */
  abandonAfterMs?: number;
  /**
   * How long a handler of this type may run (ms; 0 or null: no limit). Past it, checked by
   * the watchdog (within WATCHDOG_MS), its signal is aborted with a JobTimedOut and the
   * attempt fails with that error: retried with backoff, or the dead letter.
   */
  timeoutFor?: (type: string) => number | null | undefined;
  /** A type's own retry delays (its handlers module's jobTypes[type].backoff); undefined: the default backoff. */
  backoffFor?: (type: string) => BackoffOptions | undefined;
  log: Logger;
  workerId?: string;
}

/** How often a worker re-reads the queue controls (a pause takes effect within this). */
export const CONTROLS_REFRESH_MS = 1_000;
/**
 * How often, on average, a worker claims from its paused-or-limited queues (under their
 * lock). Each wait is drawn from ±50% around it: with a fixed period, processes keep their
 * relative phase for ever, and one whose poll always falls first after the running jobs
 * finish takes every free slot of a limited queue while its peers always find it full.
 */
export const CONTROLLED_POLL_MS = 250;
const controlledPollDelay = () => CONTROLLED_POLL_MS * (0.5 + Math.random());
/** How often a worker looks for due schedule ticks. */
export const SCHEDULE_TICK_MS = 250;
/** While a queue's list is long, ids a pop takes beyond the free slots, per slot (see Runner.held). */
export const HELD_SIGNALS_PER_SLOT = 4;
/** How long ids popped beyond the free slots may wait in the process before they go back. */
export const HELD_SIGNALS_MS = 100;
/** Why a job claimed ahead went back unrun when its worker was quieted (its attempt's error). */
const QUIETED_BEFORE_START = 'the worker was quieted by an operator before it started the job; lease handed back';
/** Why a job claimed ahead went back unrun when its queue was paused. */
const PAUSED_BEFORE_START = 'its queue was paused before the worker started the job; lease handed back';
/**
 * How long a job claimed ahead (prefetch) may wait in the process for a slot. Past it (every
 * slot busy with longer jobs), it is handed back to its queue, at the front, for a worker
 * with a free slot: without this, jobs claimed ahead behind handlers that run for hours would
 * sit `running` under renewed leases, run by nobody, for hours.
 */
export const PREFETCH_HOLD_MS = 2_000;
/** Attempts let go of that the worker remembers at most (see lettingGo). */
const LET_GO_MAX = 10_000;
/** Longest a stop gives the handlers it aborts at the end of its grace to stop (see stop). */
const STOP_ABORT_WAIT_MS = 2_000;

/** host:pid:random — unique per host, process and start, on any number of hosts. */
export const newWorkerId = () => `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

/** Why an attempt stopped being ours ('outcome_not_recorded': see RECORD_WITHIN_LEASES). */
type AbortReason = 'lease_lost' | 'lease_expired_locally' | 'cancelled' | 'shutdown' | 'outcome_not_recorded';

interface PendingCompletion {
  e: Entry;
  resultKey: string | null;
  tries: number;
  /** An earlier try errored without the server's answer: it may have committed. */
  unanswered?: boolean;
  /** For settle(): told the answer (or the error); without it the queue finishes the job itself. */
  done?: (accepted: boolean | Error) => void;
}

interface Entry {
  job: ClaimedJob;
  lease: Lease;
  ac: LazyAbort;
  /** performance.now() when the last successful renewal (or the claim) was sent. */
  renewedAt: number;
  /** 'buffered' is claimed but waits for a slot; 'running' holds a slot; 'finishing' is writing its outcome. */
  state: 'buffered' | 'running' | 'finishing';
  /** performance.now() when it was claimed into the buffer (see PREFETCH_HOLD_MS). */
  bufferedAt: number;
  /** Written to the ledger as held (Options.ledgerFile): its start is written there too, before it runs. */
  ledgered?: boolean;
  /** When it came due, on this process's performance.now() clock (the claim's time less its wait): its place in the buffer within its priority. */
  dueAt: number;
  /** performance.now() when the handler was called. */
  startedAt: number;
  /** performance.now() when the handler ended: its outcome is recorded within a lease of it, or given up. */
  finishedAt?: number;
  /** performance.now() past which the handler has run too long (Infinity: no limit). */
  deadline: number;
  /** The handler ran past its deadline: whatever it does now, the attempt fails with this. */
  timedOut?: JobTimedOut;
  lost?: AbortReason;
  cancelRequested?: boolean;
  /** Shutdown handed this lease back: the handler's outcome must not be written. */
  released?: boolean;
  /**
   * The stop aborted the handler at the end of its grace and waits for it: a result it still
   * returns completes the job (the lease is ours until the hand-back), an error hands it back.
   */
  stopAsked?: boolean;
}

/**
 * An AbortController made only when a handler asks for its signal: most short jobs never
 * do, and creating one per job is a measurable share of a no-op job's cost. An abort
 * before the signal exists is remembered and applied when it is made.
 */
class LazyAbort {
  private controller: AbortController | null = null;
  private reason: unknown = undefined;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown) {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/**
 * What a handler gets besides its payload. A class, so a job's context costs one small
 * object (its getters live on the prototype), not a set of closures per job.
 */
class Context implements JobContext {
  readonly #runner: Runner;
  readonly #e: Entry;
  /** An own property, so a handler may destructure it (`{ checkpoint }`) and call it alone. */
  readonly checkpoint: (name: string, value: unknown) => Promise<void>;
  constructor(runner: Runner, e: Entry) {
    this.#runner = runner;
    this.#e = e;
    this.checkpoint = (name, value) => runner.checkpointFor(e, name, value);
  }
  get job() {
    return this.#e.job;
  }
  get attempt() {
    return this.#e.lease.attempt;
  }
  get signal() {
    return this.#e.ac.signal;
  }
  get log() {
    return this.#runner.logFor(this.#e);
  }
  get checkpoints() {
    return Object.fromEntries(Object.entries(this.#e.job.checkpoints ?? {}).map(([k, v]) => [k, v.value]));
  }
}

export class JobAborted extends Error {
  constructor(readonly reason: AbortReason) {
    super(`job aborted: ${reason}`);
    this.name = 'JobAborted';
  }
}

/** A handler ran longer than its type allows (RunnerOptions.timeoutFor): an ordinary, retried failure. */
export class JobTimedOut extends Error {
  constructor(readonly timeoutMs: number) {
    super(`timed out: the handler ran longer than ${timeoutMs} ms`);
    this.name = 'JobTimedOut';
  }
}

export interface RunnerStats {
  claimed: number;
  completed: number;
  failed: number;
  retried: number;
  cancelled: number;
  /** Attempts its handlers put off (SnoozeError): no outcome of the job's, but a run. */
  snoozed: number;
  leaseLost: number;
  refusedWrites: number;
  /** Expired leases this process moved on: by its recover sweeps, or taken over by its claims. */
  recovered: number;
  /** Ids this process's recover sweeps rang again. */
  resignalled: number;
  /** Finished jobs this process's recover sweeps deleted past their retention window. */
  pruned: number;
}

const leaseKey = (l: Lease) => `${l.jobId}:${l.attempt}`;

export class Runner {
  readonly workerId: string;
  /** The jobs claimed ahead and not started, on file for the supervisor (Options.ledgerFile). */
  private readonly ledger: HeldLedger | null;
  readonly stats: RunnerStats = {
    claimed: 0,
    completed: 0,
    failed: 0,
    retried: 0,
    cancelled: 0,
    snoozed: 0,
    leaseLost: 0,
    refusedWrites: 0,
    recovered: 0,
    resignalled: 0,
    pruned: 0,
  };
  /** Due-to-claimed wait and handler run time, reported with each heartbeat. */
  readonly queueWait = new Histogram();
  readonly runTime = new Histogram();
  /** Outcomes and run times per queue and job type (lib/queue/type-metrics.ts), reported likewise. */
  readonly byType = new TypeTally();
  /** Heartbeat ticks so far, a renewal sent or not (one still in flight skips a tick). */
  heartbeatTicks = 0;
  /** Renewal rounds answered so far (tests check that a lost lease is noticed within the first two answered after it). */
  heartbeatAnswers = 0;
  private readonly o: RunnerOptions;
  private readonly active = new Map<string, Entry>();
  private running = 0;
  private readonly buffer: Entry[] = [];
  /**
   * Jobs this process may claim ahead of its free slots now: the prefetch asked for, halved
   * each time claimed-ahead jobs waited PREFETCH_HOLD_MS for a slot and were handed back,
   * doubled again (from at least 1) each time a slot frees while none wait. Handing back
   * costs each job an `aborted` attempt record and another claim: with handlers that run for
   * hours, a full prefetch claimed again at every free slot would pile those up.
   */
  private claimAhead: number;
  private stopping = false;
  private slotWaiter: (() => void) | null = null;
  private fetchDone: Promise<void> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  private heartbeatBusy = false;
  private heartbeatFailing = false;
  private reportFailing = false;
  private recoverBusy = false;
  private pgReceiver: PgReceiver | null = null;
  private pgMode = false;
  // Started at random: processes started together would otherwise rotate in step, all taking
  // the same queue's jobs first while Redis is away.
  private queueRotation = Math.floor(Math.random() * 1_000_000);
  private controlledRotation = 0;
  /** Queue controls (pause, limits) of this process's queues; absent = none. */
  private controls = new Map<string, ops.QueueControl>();
  /** One of this process's queues has a concurrency or rate limit (not only a pause): see prefetch. */
  private anyLimited = false;
  private nextControlledPoll = 0; // performance.now() of the next claim from controlled queues
  private nextBackstopPoll = 0; // performance.now() of the next claim from PostgreSQL whatever Redis holds
  private popRetryAt = 0; // after Redis answered a pop with an error: PostgreSQL serves until then
  private popFailing = false;
  private readonly failer: Batcher<ops.FailItem, JobStatus | null>;
  /**
   * The job types this process has handlers for. Its claims take no other: a job of a type
   * it lacks (a rolling deploy, or fleets with different handlers on one queue) waits for a
   * worker that has the handler, instead of failing here.
   */
  private readonly types: readonly string[];

  constructor(opts: RunnerOptions) {
    this.o = { ...opts, queues: [...new Set(opts.queues)] };
    this.claimAhead = opts.prefetch ?? 0;
    if (opts.startQuiet) this.pinQuiet();
    this.workerId = opts.workerId ?? newWorkerId();
    // Off when its file cannot be written (a full disk): held jobs are then charged if the process is killed, as without one.
    this.ledger = opts.ledgerFile
      ? HeldLedger.open(opts.ledgerFile, this.workerId, (err) =>
          this.o.log.warn('cannot keep the held-jobs file: jobs claimed ahead will be charged an attempt if this process is killed', { file: opts.ledgerFile, err }),
        )
      : null;
    this.types = Object.keys(opts.handlers).filter((name) => typeof opts.handlers[name] === 'function');
    this.failer = new Batcher(async (items) => {
      const res = await ops.jobFail(this.o.pool, { workerId: this.workerId, items });
      return items.map((i) => res.get(i.jobId)?.status ?? null);
    });
  }

  private get log() {
    return this.o.log;
  }

  /** The completion inside an explicit transaction, so a fault can strike before COMMIT (tests only). */
  private async completeInTransaction(items: (Lease & { resultKey: string | null })[]) {
    return useTransaction(this.o.pool, async (client) => {
      const ok = await ops.jobComplete(client, { workerId: this.workerId, items });
      await failpoint('before_complete_commit', items.map((i) => i.jobId));
      return ok;
    });
  }

  get inFlight() {
    return this.active.size;
  }

  /** Ids popped beyond the free slots and held, unclaimed, for the next rounds. */
  get heldSignals() {
    return this.held.length;
  }

  async start() {
    const { previous } = await ops.workerRegister(this.o.pool, {
      workerId: this.workerId,
      host: os.hostname(),
      pid: process.pid,
      queues: this.o.queues,
      concurrency: this.o.concurrency,
      types: this.types,
    });
    this.reportedBefore = previous;
    if (failpointsEnabled) await failpoint('after_register', [this.workerId]);
    await this.refreshControls();
    // Before the first claim: without statistics a claim may read the whole backlog.
    this.noteStatistics(await ops.ensureJobStatistics(this.o.pool).catch(() => null));
    this.timers.push(setInterval(() => void this.heartbeatTick(), this.o.heartbeatMs));
    this.timers.push(setInterval(() => this.watchdog(), watchdogPeriodMs(this.o)));
    this.timers.push(setInterval(() => void this.recoverTick(), this.o.recoverMs));
    this.timers.push(setInterval(() => void this.refreshControls(), CONTROLS_REFRESH_MS));
    this.timers.push(setInterval(() => void this.scheduleTick(), SCHEDULE_TICK_MS));
    this.o.receiver?.redis.on('ready', this.signalBack);
    void this.recoverTick(); // at start, not only periodically
    // The first claims come from the signal (the sweep just started re-rings lost ones); the
    // periodic claim from PostgreSQL begins a poll interval in.
    this.nextBackstopPoll = performance.now() + this.o.pollMs;
    this.fetchDone = this.fetchLoop();
  }

  // ---------------------------------------------------------------- fetching

  /**
   * Jobs claimed ahead of free slots — none while one of this process's queues is limited (a
   * concurrency or rate limit): a held job counts as running against its queue's limit while
   * it runs nothing (other workers with free slots wait), and held jobs would start back to
   * back, past the rate. Claims then take only free slots, and what they claim starts at once.
   */
  private get prefetch() {
    return this.anyLimited ? 0 : this.claimAhead;
  }

  /** Jobs to claim now: room left, once the buffer has drained to half (so claims come in batches). */
  private get want() {
    const room = this.o.concurrency + this.prefetch - this.running - this.buffer.length;
    if (room <= 0 || this.buffer.length > this.prefetch / 2) return 0;
    return room;
  }

  private waitForSlot(): Promise<void> {
    if (this.want > 0 || this.stopping) return Promise.resolve();
    return new Promise((resolve) => (this.slotWaiter = resolve));
  }

  /**
   * Wakes the fetch loop — after the current burst of microtasks (handlers finishing
   * together free their slots together), so one claim fills them all instead of one each.
   */
  private wakeFetcher() {
    const w = this.slotWaiter;
    if (!w) return;
    this.slotWaiter = null;
    setImmediate(w);
  }

  private async fetchLoop() {
    let backlog = false; // PostgreSQL returned a full batch last time: more is due
    while (!this.stopping) {
      if (this.claimInDoubt || this.handBackInDoubt) await this.releaseUnrun();
      // The last round is over (it may have ended with continue), unless a claim of it lost
      // its answer and may yet take jobs that releaseUnrun has not found.
      this.claimingRound = this.claimInDoubt;
      await this.waitForSlot();
      if (this.stopping) break;
      const want = this.want;
      if (want <= 0) continue;
      // When the first claim statement that returned jobs was sent: their leases started no
      // earlier, so the local lease clock runs from here. Not from before a blocking pop: a
      // pop that waited (or hung while Redis died) would start the jobs half-expired locally.
      let claimSentAt = performance.now();
      const { fast, controlled } = this.queueSets();
      this.claimingRound = fast.length + controlled.length > 0;
      // Every statement below adds what it claimed here at once: if a later one fails, the
      // jobs already claimed are still run (dropped, they would stay running under this
      // worker's id, unrenewed, until their leases expired and recover counted a lost lease).
      const jobs: ClaimedJob[] = [];
      const firstClaim = () => {
        if (!jobs.length) claimSentAt = performance.now();
      };
      try {
        // Paused and limited queues: claimed under their lock, by polling (every
        // CONTROLLED_POLL_MS on average), never from the doorbell.
        if (controlled.length && performance.now() >= this.nextControlledPoll) {
          claimSentAt = performance.now();
          this.nextControlledPoll = claimSentAt + controlledPollDelay();
          // A claim that filled every free slot leaves more behind: with no other queue to
          // serve, claim again as soon as a slot frees rather than a poll later (which capped a
          // limited queue at about 4 × C jobs a second per process, however generous its limit).
          if ((await this.claimControlled(controlled, want, jobs)) >= want && !fast.length) this.nextControlledPoll = 0;
        }
        const rest = want - jobs.length;
        const receiver = this.o.receiver;
        // While controlled queues are polled, no blocking pop may outlast their next poll.
        // Whole milliseconds, at least 1, or 0 (no wait): Redis before 7.0.8 reads a blocking
        // pop's timeout under 1 ms as 0, which means for ever (redis/redis#11687).
        const untilMs = this.nextControlledPoll - performance.now();
        const untilControlledPoll = untilMs < 1 ? 0 : Math.ceil(untilMs);
        const popWait = backlog ? 0 : controlled.length ? Math.min(this.o.pollMs, untilControlledPoll) : this.o.pollMs;
        if (rest <= 0) {
          // the controlled queues filled the free slots
        } else if (!fast.length || this.quiet) {
          // Nothing to pop from: wait for the next controlled poll — or, with every queue
          // paused (none controlled to poll), for the controls to change. Or quieted while
          // the controlled queues were claimed: no further statement claims.
          if (!jobs.length) await this.idle(sleep(Math.min(this.o.pollMs, controlled.length ? untilControlledPoll : CONTROLLED_POLL_MS)));
        } else if (performance.now() >= this.nextBackstopPoll) {
          // Every pollMs the oldest due jobs come straight from PostgreSQL, whatever Redis
          // holds. A retry or a delayed job that comes due has no id in the list until a
          // sweep rings it, and the sweep rings only when the list holds fewer ids than jobs
          // wait: under steady traffic it would wait behind every newer job.
          this.nextBackstopPoll = performance.now() + this.o.pollMs;
          firstClaim();
          backlog = (await this.claimFromPostgres(fast, rest, jobs)) >= rest;
        } else if (receiver && receiver.available && performance.now() >= this.popRetryAt) {
          this.leavePgMode();
          const ids = await this.signalled(receiver, fast, rest, popWait, jobs.length > 0);
          if (this.quiet) {
            // Quieted while the pop waited: nothing more is claimed (its ids went back).
          } else if (ids?.length) {
            if (failpointsEnabled) await failpoint('after_pop', ids);
            firstClaim();
            await ops.jobClaim(this.o.pool, { ids, workerId: this.workerId, leaseMs: this.o.leaseMs, allowSuspect: !this.holdsSuspect(jobs), types: this.types }, jobs);
          } else {
            // Nothing rung (or Redis answered with an error): PostgreSQL may still hold due jobs.
            firstClaim();
            backlog = (await this.claimFromPostgres(fast, rest, jobs)) >= rest;
          }
        } else {
          await this.enterPgMode();
          firstClaim();
          backlog = (await this.claimFromPostgres(fast, rest, jobs)) >= rest;
          if (!backlog && !jobs.length && !this.stopping) await this.idle(this.pgReceiver!.wait(popWait));
        }
      } catch (err) {
        const signalLost = err instanceof SignalUnavailable;
        if (!signalLost) this.log.warn('claiming failed; retrying', { err, claimedBeforeIt: jobs.length });
        // Without the server's answer, the claim may have committed: see releaseUnrun.
        if (!signalLost && !answeredByServer(err)) this.claimInDoubt = true;
        if (!jobs.length) {
          if (!signalLost) {
            const pause = sleep(Math.min(this.o.pollMs, 1_000));
            await (this.claimInDoubt ? pause : this.idle(pause));
          }
          continue;
        }
      }
      if (jobs.length === 0) continue;
      this.stats.claimed += jobs.length;
      for (const j of jobs) {
        this.queueWait.observe(j.waitedMs);
        // A takeover is a recovery too: a dead worker's jobs are often taken over by an idle
        // peer's claim before any sweep moves them.
        if (j.takenOver) {
          this.stats.recovered++;
          this.byType.count(j, 'leaseLost');
        }
      }
      if (failpointsEnabled) await failpoint('after_claim', jobs.map((j) => j.id));
      const renewedAt = performance.now() - claimSentAt > this.o.leaseMs / 3 ? await this.renewSlowClaim(jobs) : null;
      for (const job of jobs) {
        const at = renewedAt ? renewedAt.get(job.id) : claimSentAt;
        if (at !== undefined) this.begin(job, at ?? claimSentAt);
      }
      // Started once the whole claim is in the buffer, so its free slots go to its first jobs
      // by priority and due time (a claim returns its jobs by id).
      this.pump();
      // What waits for a slot, on file for the supervisor before any of it can start (no pump
      // comes between): if this process is killed, it gives those attempts back (held-ledger.ts).
      if (this.ledger && this.buffer.length) {
        const held = this.buffer.filter((e) => !e.ledgered);
        for (const e of held) e.ledgered = true;
        this.ledger.held(held.map((e) => e.lease));
      }
      // Quieted while this round claimed: what it took starts on free slots; the rest, claimed
      // ahead, goes back now rather than wait here for a slot. The same for a queue paused.
      if (this.quiet) this.handBackBuffered();
      else if (this.controls.size) this.handBackPaused();
    }
    this.claimingRound = false;
  }

  /**
   * A claim round is under way that began before the quiet now in force (if any): the quiet
   * is acknowledged (metrics) only once it ends, for a claim statement it already sent may
   * still take jobs. Cleared at each round's end and while the round only waits (a blocking
   * pop, whose ids go back if a quiet comes meanwhile; a sleep or a LISTEN before the next).
   */
  private claimingRound = false;
  private async idle<T>(wait: Promise<T>): Promise<T> {
    const was = this.claimingRound;
    this.claimingRound = false;
    try {
      return await wait;
    } finally {
      this.claimingRound = was;
    }
  }

  /**
   * A claim that took long to answer (a stalled database, a wait for a connection): its
   * leases began somewhere in that wait, and the local lease clock, counting from the send,
   * may find them spent before the jobs start (a review's 12-second stall with 4-second
   * leases had the watchdog give up five jobs 80 ms after their claim, and the sweep then
   * failed them for a lease they never had a chance to hold). Renewed once before they
   * start: each job → when its lease was renewed (null: not renewed, a row another
   * transaction held; the local clock then counts from the claim, as before); a job whose
   * lease is no longer ours is left out, never started.
   */
  private async renewSlowClaim(jobs: readonly ClaimedJob[]): Promise<Map<string, number | null>> {
    const out = new Map<string, number | null>();
    try {
      // Never null: a claim's jobs are never none.
      const { renewed, busy, sentAt } = (await this.renewLeases(
        () => jobs,
        (j) => ({ jobId: j.id, attempt: j.attemptCount }),
      ))!;
      for (const j of jobs) {
        if (renewed.has(j.id)) out.set(j.id, sentAt);
        else if (busy.has(j.id)) out.set(j.id, null);
        else this.log.warn('a job claimed by a slow statement was taken from this worker before it started; not run', { job: j.id, attempt: j.attemptCount });
      }
    } catch (err) {
      this.log.warn('could not renew the leases of a slow claim before starting its jobs', { jobs: jobs.length, err });
      for (const j of jobs) out.set(j.id, null);
    }
    return out;
  }

  /**
   * Renews leases in one statement, and says when it was sent: once a connection was in hand,
   * not when asked. The server's now() that sets the leases' new end is no earlier, and a
   * renewal that waited for a connection (both busy, or a new one being made to a slow or
   * restarted server: several round trips) must not count that wait against the leases.
   * What to renew is chosen then too (`select`): a job the watchdog gave up during the wait
   * is not extended, which would hold back its recovery by a lease. Null: nothing to renew.
   */
  private async renewLeases<T>(select: () => readonly T[], leaseOf: (job: T) => Lease) {
    const c = await this.o.heartbeatPool.connect();
    const sentAt = performance.now();
    try {
      const renewing = select();
      if (!renewing.length) {
        c.release();
        return null;
      }
      const renewal = await ops.jobHeartbeat(c, { workerId: this.workerId, leaseMs: this.o.leaseMs, leases: renewing.map(leaseOf) });
      c.release();
      return { ...renewal, renewing, sentAt };
    } catch (err) {
      // Dropped whatever the error, as pool.query does: one statement, nothing to roll back,
      // and no round trip more before the next tick may try again.
      c.release(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
  }

  /** A claim errored without the server's answer: jobs it took may be leased to us and run nowhere. */
  private claimInDoubt = false;
  /**
   * A hand-back of jobs claimed ahead failed (handBackWaiting): they are no longer tracked
   * here, their leases are not renewed, and left to expire they would spend an attempt they
   * never used (a job of one attempt would fail unrun). releaseUnrun hands them back.
   */
  private handBackInDoubt = false;
  /** Hand-backs (and cancel acknowledgements, ackUnstartedCancel) of jobs claimed ahead still in flight: stop() waits for them. */
  private readonly handingBack = new Set<Promise<void>>();
  /**
   * Attempts this process let go of while the database may still show them running here
   * (an outcome it could not record, a lease it gave up): they ran, so they are left to the
   * recover sweep, never handed back as unrun (which would give their attempt back).
   * "jobId:attempt" → when. Forgotten once the database no longer shows the attempt held by
   * this worker (settleLetGo), never after a time alone: while the database is away no sweep
   * runs, and a review's 20-second outage with 4-second leases had ten jobs that ran handed
   * back as never run, their attempts given back, when forgotten after two leases.
   */
  private readonly lettingGo = new Map<string, number>();
  /**
   * Of those, the attempts whose outcome a try may have recorded after all: it errored
   * without the server's answer (a connection lost after COMMIT). Once the database no
   * longer shows them held here, their attempt history says how they ended, which the
   * counters and the log then tell (see settleUnsure).
   */
  private readonly unsureLetGo = new Map<string, { lease: Lease; kind: JobKind }>();
  /** `kind` (the job's queue and type) is what an unsure outcome is counted under once settled. */
  private letGo(l: Lease, unsure: { kind: JobKind } | false = false) {
    const key = leaseKey(l);
    this.lettingGo.set(key, performance.now());
    // The kind alone, not the job it came from: an entry may wait here for minutes, its payload with it.
    if (unsure) this.unsureLetGo.set(key, { lease: l, kind: { queue: unsure.kind.queue, type: unsure.kind.type } });
    // Bounded whatever the database says (it may not answer for long): past this, the
    // oldest go first, long since taken by a sweep in all but the strangest outage.
    if (this.lettingGo.size > LET_GO_MAX) {
      const oldest = this.lettingGo.keys().next().value!;
      this.lettingGo.delete(oldest);
      this.unsureLetGo.delete(oldest);
    }
  }
  /**
   * Forgets the attempts let go of that the database (`held`: its leases of this worker,
   * read from `readAt` on) no longer shows ours — of those let go before the read, which it
   * would have seen.
   */
  private settleLetGo(held: readonly Lease[], readAt: number) {
    const still = new Set(held.map(leaseKey));
    const unsure: { lease: Lease; kind: JobKind }[] = [];
    for (const [key, at] of this.lettingGo) {
      if (at >= readAt || still.has(key)) continue;
      this.lettingGo.delete(key);
      const l = this.unsureLetGo.get(key);
      if (l) unsure.push(l);
      this.unsureLetGo.delete(key);
    }
    if (unsure.length) void this.settleUnsure(unsure);
  }

  /**
   * How the attempts whose outcome this process could not confirm ended, by their history:
   * an outcome recorded by a try whose answer was lost is counted now (the completed and
   * failed counters would miss it), and the log says which it was, after saying it might be
   * (a warning, as visible as that error was).
   */
  private async settleUnsure(unsure: { lease: Lease; kind: JobKind }[]) {
    try {
      const ended = await ops.attemptOutcomes(this.o.pool, { workerId: this.workerId, leases: unsure.map((u) => u.lease) });
      for (const { lease: l, kind } of unsure) {
        const outcome = ended.get(l.jobId);
        if (outcome && this.countRecorded(outcome, kind)) {
          this.log.warn('an outcome whose answer was lost had been recorded after all', { job: l.jobId, attempt: l.attempt, outcome });
        } else {
          this.log.warn('an outcome whose answer was lost had not been recorded: the job was recovered', { job: l.jobId, attempt: l.attempt, outcome: outcome ?? null });
        }
      }
    } catch {
      // The database is away again: the counters miss these, as they did before this check.
    }
  }
  /** Counts an outcome this process recorded, found in the attempt history; false for one it did not record (a lost lease, a hand-back). */
  private countRecorded(outcome: AttemptOutcome, kind: JobKind): boolean {
    if (outcome === 'completed' || outcome === 'failed' || outcome === 'retried' || outcome === 'cancelled' || outcome === 'snoozed') {
      this.countOutcome(outcome, kind);
      return true;
    }
    return false;
  }
  /** An attempt this process ran ended so, its outcome recorded: the process's counters and its job type's. */
  private countOutcome(outcome: TypeOutcome, kind: JobKind, n = 1) {
    this.stats[outcome] += n;
    this.byType.count(kind, outcome, n);
  }
  private settlingLetGo = false;
  /**
   * From the heartbeat: once an attempt let go of is two leases old, the sweep has likely
   * taken it; one read of this worker's leases confirms it, and keeps the map small.
   */
  private async settleOldLetGo() {
    const first = this.lettingGo.values().next();
    if (first.done || first.value > performance.now() - 2 * this.o.leaseMs || this.settlingLetGo) return;
    this.settlingLetGo = true;
    try {
      const readAt = performance.now();
      // Through the main pool: the heartbeat's two connections are for renewals.
      this.settleLetGo(await ops.leasesHeldBy(this.o.pool, { workerId: this.workerId }), readAt);
    } catch {
      // The database is away: kept, and asked again at a later heartbeat.
    } finally {
      this.settlingLetGo = false;
    }
  }
  private releaseFailing = false;

  /**
   * After a claim that errored without the server's answer (a timeout, a connection lost
   * after COMMIT): the jobs it took, if it committed, are leased to this worker but run
   * nowhere. They are handed back now — queued again, the attempt given back — instead of
   * waiting out a lease for the recover sweep, which would spend an attempt (a job with one
   * attempt would fail without ever starting) and count a lost lease against it. Called by
   * the fetch loop between rounds: every job a claim returned here has begun, so a running
   * job of ours that is not in `active` under the same attempt came from the lost answer.
   * A claim still executing on the server when this looks is left to the sweep, as before.
   */
  private async releaseUnrun() {
    // Taken now: a hand-back failing while this runs sets it again, for the next round.
    const handBack = this.handBackInDoubt;
    this.handBackInDoubt = false;
    try {
      const readAt = performance.now();
      const held = await ops.leasesHeldBy(this.o.pool, { workerId: this.workerId });
      this.settleLetGo(held, readAt);
      const unrun = held.filter((l) => this.active.get(l.jobId)?.lease.attempt !== l.attempt && !this.lettingGo.has(leaseKey(l)));
      const released = await ops.jobRelease(this.o.pool, {
        workerId: this.workerId,
        leases: unrun,
        reason: this.claimInDoubt
          ? 'claimed by a statement whose answer was lost; handed back without running'
          : 'claimed ahead, no slot freed; handed back without running after a hand-back that failed',
        unstarted: true,
        doorbell: this.o.doorbell,
      });
      if (released.length) {
        this.log.warn(this.claimInDoubt ? "a claim's answer was lost: the jobs it took are handed back" : 'jobs claimed ahead whose hand-back failed are handed back', { jobs: released.map((r) => r.jobId) });
      }
      await this.cancelRefused(unrun, released, true);
      this.claimInDoubt = false;
      this.releaseFailing = false;
    } catch (err) {
      if (handBack) this.handBackInDoubt = true;
      // Tried again before the next round; the database is likely away, which the claims report.
      if (!this.releaseFailing) this.log.warn('could not look for jobs a lost claim took; trying again', { err });
      this.releaseFailing = true;
    }
  }

  // ------------------------------------------------------- signals held in hand

  /**
   * Ids popped beyond the free slots, not claimed: their jobs are still queued in PostgreSQL,
   * claimable by any worker. While the list is long (the last pop filled every slot), a pop
   * takes HELD_SIGNALS_PER_SLOT × C more ids than the free slots, and the next rounds claim
   * from these instead of popping: a round is then one claim instead of a pop and a claim,
   * and each of those is a wake-up of the process, its most expensive part with short jobs.
   * Not held for long: what is left after HELD_SIGNALS_MS (slots busy with longer jobs, or
   * the queue paused meanwhile) or at shutdown goes back to the front of its list. A crash
   * loses nothing: the recover sweep rings due jobs that have no id in their list.
   */
  private held: Ring[] = [];
  private heldTimer: NodeJS.Timeout | null = null;
  private lastPopFull = false;

  /**
   * Ids to claim this round: held ones first, topped up by a pop when they do not fill the
   * free slots and the list had more at the last pop (null: Redis refused the pop). The
   * top-up waits for nothing (ids are in hand) and goes into the same claim: claimed apart,
   * the few held ids cost a claim statement of their own, a round trip to PostgreSQL where
   * the pop is one to Redis (with claims of 500, every other claim carried the 40 held ids).
   */
  private async signalled(receiver: RedisReceiver, queues: readonly string[], rest: number, waitMs: number, holding: boolean): Promise<string[] | null> {
    const taken: Ring[] = [];
    let take: string[] = [];
    if (this.held.length) {
      // One pass: the first `rest` held ids of queues still popped from; the others stay
      // (a queue paused meanwhile: its ids go back with the rest when the timer ends).
      const keep: Ring[] = [];
      for (const r of this.held) {
        if (taken.length < rest && queues.includes(r.queue)) taken.push(r);
        else keep.push(r);
      }
      take = taken.map((r) => r.jobId);
      if (take.length) {
        this.held = keep;
        if (!keep.length) this.clearHeldTimer();
        if (take.length === rest || !this.lastPopFull) return take;
      }
    }
    const want = rest - take.length;
    // More ids to hold only while holding saves pops: not when this round's claim is larger
    // than what would be held (a batch: every round pops anyway, and held ids would only
    // wait here, hidden from idle workers, for a round).
    const holdable = HELD_SIGNALS_PER_SLOT * this.o.concurrency;
    const extra = this.lastPopFull && !failpointsEnabled && (!take.length || rest <= holdable) ? holdable : 0;
    let popped: Ring[] | null;
    try {
      // The pop only waits, unless this round holds jobs it claimed (from a limited queue) and
      // has not begun: a quiet is not acknowledged before they are in hand.
      const pop = this.pop(receiver, queues, want + extra, take.length ? 0 : waitMs);
      popped = await (holding ? pop : this.idle(pop));
    } catch (err) {
      // Redis went away: claim what is in hand (unless quieted meanwhile: then it goes back,
      // or to the sweep if Redis refuses it); the next round finds the signal unavailable.
      if (take.length && this.quiet) return this.giveBack(taken);
      if (take.length) return take;
      throw err;
    }
    this.lastPopFull = !!popped && popped.length >= want + extra;
    // Quieted while the pop waited (a heartbeat brought it): these ids are for the other
    // workers, back at the front of their lists.
    if (this.quiet) return this.giveBack([...taken, ...(popped ?? [])]);
    if (!popped) return take.length ? take : null;
    if (popped.length > want) {
      this.held.push(...popped.splice(want));
      this.heldTimer ??= setTimeout(() => {
        this.heldTimer = null;
        void this.giveBackHeld();
      }, this.o.heldSignalsMs ?? HELD_SIGNALS_MS);
    }
    return take.concat(popped.map((r) => r.jobId));
  }

  private clearHeldTimer() {
    if (this.heldTimer) clearTimeout(this.heldTimer);
    this.heldTimer = null;
  }

  /** Ids a quieted round took or popped, back to their lists with the held ones: none is claimed. */
  private giveBack(rings: readonly Ring[]): [] {
    this.held.push(...rings);
    void this.giveBackHeld();
    return [];
  }

  /** Puts held ids back at the front of their lists, for any worker to take. */
  private async giveBackHeld() {
    this.clearHeldTimer();
    const back = this.held.splice(0);
    if (!back.length || !this.o.doorbell) return;
    try {
      await this.o.doorbell.ring(back, { front: true });
    } catch (err) {
      // The jobs are queued in PostgreSQL: the recover sweep rings them again.
      this.log.warn('could not give held signals back to Redis; the recover sweep will ring them', { jobs: back.length, err });
    }
  }

  /**
   * Job ids rung in Redis, or null when Redis answered the pop with an error (a refused
   * write on a full disk, a read-only replica after a failover, a missing permission):
   * the connection is up, so it is not SignalUnavailable, but the signal is unusable.
   * PostgreSQL then serves this round and the rounds of the next pollMs.
   */
  private async pop(receiver: RedisReceiver, queues: readonly string[], max: number, waitMs: number): Promise<Ring[] | null> {
    try {
      const rings = await receiver.take(queues, max, waitMs);
      if (this.popFailing) this.log.info('Redis answers pops again: claiming on its signal');
      this.popFailing = false;
      return rings;
    } catch (err) {
      if (err instanceof SignalUnavailable) throw err;
      if (!this.popFailing) this.log.warn('Redis refused a pop; claiming from PostgreSQL (poll + LISTEN) until it answers', { err });
      this.popFailing = true;
      this.popRetryAt = performance.now() + this.o.pollMs;
      return null;
    }
  }

  /**
   * Quieted by an operator (read with each heartbeat): no new claims, from any queue, while
   * the jobs in hand finish and their leases are renewed; the sweep and the schedules go on.
   * No id is popped from Redis meanwhile: the other workers take them.
   */
  private quiet = false;
  /** The quiet request this process runs by (its token, reported back with the next heartbeat). */
  private quietToken: string | null = null;
  private setQuiet(quiet: boolean, token: string | null) {
    const recorded = this.quietToken !== null;
    this.quietToken = quiet ? token : null;
    if (quiet === this.quiet) return;
    this.quiet = quiet;
    // Jobs claimed ahead and not started would wait here for a slot: the other workers take them.
    if (quiet) this.handBackBuffered();
    this.log.info(quiet ? 'quieted by an operator: claiming no new jobs; those in hand finish' : 'resumed by an operator: claiming again');
    // Not when a pinned quiet that was never recorded lets go (see unpinQuiet): no one resumed.
    if (!quiet && recorded) this.o.onResumed?.();
  }

  /** Quiet: jobs claimed ahead and not started go back to their queue, for the other workers. */
  private handBackBuffered() {
    if (this.buffer.length && !this.stopping) this.handBack(this.buffer.splice(0), QUIETED_BEFORE_START);
  }

  /**
   * Jobs claimed ahead from a queue now paused go back to it unrun, as a quiet's do: an
   * operator pauses a queue to stop its handlers from starting (a failing downstream), and
   * up to --prefetch of them would otherwise start after the pause, one per freed slot.
   */
  private handBackPaused() {
    if (!this.buffer.length || this.stopping) return;
    const kept: Entry[] = [];
    const paused: Entry[] = [];
    for (const e of this.buffer) (this.controls.get(e.job.queue)?.paused ? paused : kept).push(e);
    if (!paused.length) return;
    // One pass, the buffer's order kept: it holds up to --prefetch + C entries.
    this.buffer.splice(0, this.buffer.length, ...kept);
    this.handBack(paused, PAUSED_BEFORE_START);
  }

  /**
   * Quiet at once, the request already written (SIGTSTP, worker/process.ts), as if a heartbeat
   * had brought it. A heartbeat sent before it may still answer "not quiet": that answer is
   * older than the request and is not followed (see heartbeat).
   */
  quietNow(token: string | null) {
    this.quietNowAt = performance.now();
    this.setQuiet(true, token ?? this.quietToken);
  }
  /** Quiet, whatever heartbeats answer, until quietNow() or unpinQuiet(): see startQuiet. */
  pinQuiet() {
    this.quiet = true;
    this.quietNowAt = Infinity;
  }
  /**
   * Pinned quiet, but the request could not be written or was called off before it was:
   * claiming again at once (nothing recorded it), and heartbeats' answers rule again.
   */
  unpinQuiet() {
    if (this.quietNowAt !== Infinity) return;
    this.quietNowAt = -Infinity;
    if (this.quietToken === null) this.quiet = false;
  }
  private quietNowAt = -Infinity;

  /** This process's queues split by their controls (paused ones in neither list; none while quiet). */
  private queueSets(): { fast: string[]; controlled: string[] } {
    const fast: string[] = [];
    const controlled: string[] = [];
    if (this.quiet) return { fast, controlled };
    for (const q of this.o.queues) {
      const c = this.controls.get(q);
      if (!c) fast.push(q);
      else if (!c.paused) controlled.push(q);
    }
    return { fast, controlled };
  }

  /** Refreshes the queue controls (pauses and limits set by operators, shared by every worker). */
  private async refreshControls() {
    try {
      const list = await ops.queueControls(this.o.pool, this.o.queues);
      const next = new Map(list.map((c) => [c.name, c]));
      for (const q of this.o.queues) {
        const was = this.controls.get(q);
        const now = next.get(q);
        if (!!was?.paused !== !!now?.paused) this.log.info(now?.paused ? 'queue paused: not claiming from it' : 'queue resumed', { queue: q });
      }
      this.controls = next;
      this.anyLimited = [...next.values()].some((c) => !c.paused);
      this.handBackPaused();
      // Their doorbells are not listened to: drop what producers rang, so the lists stay empty.
      const quiet = this.o.queues.filter((q) => next.has(q));
      if (quiet.length) await this.o.doorbell.discard?.(quiet);
    } catch (err) {
      this.log.debug('could not read queue controls; keeping the last known', { err });
    }
  }

  /** Claims from paused-or-limited queues into `into` (each statement's jobs at once); returns how many. */
  private async claimControlled(queues: readonly string[], want: number, into: ClaimedJob[]): Promise<number> {
    const before = into.length;
    // Starting from the next queue each time: always from the first, a queue whose allowance
    // covers the free slots would leave the ones after it nothing until it drained.
    const start = this.controlledRotation++ % Math.max(1, queues.length);
    for (let k = 0; k < queues.length; k++) {
      const queue = queues[(start + k) % queues.length]!;
      const left = want - (into.length - before);
      if (left <= 0 || this.quiet) break;
      into.push(
        ...(await ops.jobClaimControlled(this.o.pool, {
          queue,
          limit: left,
          workerId: this.workerId,
          leaseMs: this.o.leaseMs,
          allowSuspect: !this.holdsSuspect(into),
          types: this.types,
        })),
      );
    }
    return into.length - before;
  }

  /**
   * Claims due jobs straight from PostgreSQL into `into`, by priority across the queues (the
   * queues' order rotating between claims), and — when that leaves slots free — jobs whose
   * lease expired, queue by queue, so an idle worker recovers a crashed peer's jobs even if
   * no sweep runs. Returns how many.
   */
  private async claimFromPostgres(queues: readonly string[], want: number, into: ClaimedJob[]): Promise<number> {
    const db = this.o.pool;
    const before = into.length;
    const left = () => want - (into.length - before);
    const start = this.queueRotation++ % queues.length;
    const p = () => ({ workerId: this.workerId, leaseMs: this.o.leaseMs, allowSuspect: !this.holdsSuspect(into), types: this.types });
    // One statement over every queue: by priority across them, then queue by queue in the
    // rotated order within a level (as the Redis pop takes them), then oldest first.
    const rotated = queues.map((_, k) => queues[(start + k) % queues.length]!);
    if (!this.quiet) into.push(...(await ops.jobClaimNextAcross(db, { ...p(), queues: rotated, limit: left() })));
    // A quiet that comes between two statements stops the rest (one already sent runs on).
    for (const queue of rotated) {
      if (left() <= 0 || this.quiet) break;
      into.push(...(await ops.jobClaimExpired(db, { ...p(), queue, limit: left() })));
    }
    return into.length - before;
  }

  /**
   * Does this process hold a suspect (a job that lost its lease twice in a row, perhaps
   * because it kills its worker)? Then it claims no other: if that job crashes this process
   * again, it takes no second suspect down with it.
   */
  private holdsSuspect(extra: readonly ClaimedJob[] = []): boolean {
    for (const e of this.active.values()) if (isSuspect(e.job) && e.state !== 'finishing') return true;
    return extra.some(isSuspect);
  }

  private async enterPgMode() {
    if (this.pgMode) return;
    this.pgMode = true;
    // (A pop Redis refused has said so already: see pop.)
    if (this.o.receiver && !this.popFailing) this.log.warn('claiming from PostgreSQL (poll + LISTEN) while Redis is unreachable');
    if (!this.pgReceiver) {
      this.pgReceiver = new PgReceiver(this.o.databaseUrl, this.log);
      await this.pgReceiver.start();
    }
  }

  /**
   * Redis is back: a fetch loop waiting on LISTEN (claiming from PostgreSQL while it was away)
   * pops again now. Producers ring only Redis once they reach it, so nothing else would wake
   * that wait before its poll interval ended, and jobs enqueued meanwhile waited for it.
   */
  private readonly signalBack = () => this.pgReceiver?.wake();

  private leavePgMode() {
    if (!this.pgMode) return;
    this.pgMode = false;
    if (!this.popFailing) this.log.info('Redis reachable again: claiming on its signal');
  }

  // ---------------------------------------------------------------- running

  /** Takes a claimed job into the buffer (pump() starts it). */
  private begin(job: ClaimedJob, claimSentAt: number) {
    // A job claimed again while an older attempt of it is still in hand here: the older
    // one's lease is gone (the job went back to the queue); it must not write.
    const stale = this.active.get(job.id);
    if (stale) this.lose(stale, 'lease_lost');
    const entry: Entry = {
      job,
      lease: { jobId: job.id, attempt: job.attemptCount },
      ac: new LazyAbort(),
      renewedAt: claimSentAt,
      state: 'buffered',
      bufferedAt: performance.now(),
      dueAt: claimSentAt - job.waitedMs,
      startedAt: 0,
      deadline: Infinity,
    };
    this.active.set(job.id, entry);
    // In priority order (a claim's batch, or jobs held from several pops, can mix levels),
    // and within a level the one due first first (a claim returns its jobs by id). Its place
    // is looked for from the back, where it almost always goes: from the front, each claim
    // of 490 cost some 120,000 comparisons.
    let at = this.buffer.length;
    while (at > 0 && runsAfter(this.buffer[at - 1]!, entry)) at--;
    this.buffer.splice(at, 0, entry);
  }

  /** Starts buffered jobs while slots are free. */
  private pump() {
    let starting: Entry[] | null = null;
    while (this.running < this.o.concurrency && this.buffer.length && !this.stopping) {
      const e = this.buffer.shift()!;
      e.state = 'running';
      this.running++;
      // Without a ledger (the harness's Runner, --prefetch 0) started at once, as before: no array per pump.
      if (this.ledger) (starting ??= []).push(e);
      else this.execute(e);
    }
    if (!starting) return;
    // A held job's start is on file before its handler runs (held-ledger.ts): the supervisor
    // must never give back the attempt of a job that may have run.
    const held = starting.filter((e) => e.ledgered);
    if (held.length) this.ledger!.starting(held.map((e) => e.lease));
    for (const e of starting) this.execute(e);
  }

  /** Drops a buffered job that never started (its lease is lost, or it was cancelled). */
  private unbuffer(e: Entry) {
    const k = this.buffer.indexOf(e);
    if (k >= 0) this.buffer.splice(k, 1);
    if (e.ledgered) this.ledger?.forget([e.lease]);
    this.forget(e);
    this.wakeFetcher();
  }

  /**
   * Stops tracking this attempt — only if it is still the one tracked for its job: the same
   * job claimed again meanwhile (see begin) has a new entry, which must stay.
   */
  private forget(e: Entry) {
    if (this.active.get(e.job.id) === e) this.active.delete(e.job.id);
  }

  /**
   * Runs a job's handler. The hot path allocates no promise of its own: a handler that
   * returns a plain value (or null) is finished from a microtask, and its completion joins
   * the batch of this turn of the event loop.
   */
  private execute(e: Entry) {
    const { job } = e;
    // Own properties only: a job of type "constructor" must not run Object's.
    const handler = Object.hasOwn(this.o.handlers, job.type) ? this.o.handlers[job.type] : undefined;
    e.startedAt = performance.now();
    const timeoutMs = this.o.timeoutFor?.(job.type);
    if (timeoutMs) e.deadline = e.startedAt + timeoutMs;
    const done = (result: unknown, error: unknown) => this.finished(e, result, error);
    queueMicrotask(() => {
      let out: unknown;
      try {
        // A defence only: claims take the types of the handlers this process started with.
        if (!handler) throw new PermanentError(`no handler registered for job type ${JSON.stringify(job.type)}`);
        out = handler(job.payload, new Context(this, e));
      } catch (err) {
        return done(undefined, err ?? new Error('handler threw a falsy value'));
      }
      if (failpointsEnabled) setImmediate(() => void failpoint('mid_handler', [job.id]));
      let then: unknown;
      try {
        then = out !== null && typeof out === 'object' ? (out as PromiseLike<unknown>).then : undefined;
        if (typeof then === 'function') {
          then.call(
            out,
            (r: unknown) => done(r, null),
            (err: unknown) => done(undefined, err ?? new Error('handler rejected with a falsy value')),
          );
          return;
        }
      } catch (err) {
        // A thenable whose `then` throws: the handler's failure, not the process's.
        return done(undefined, err ?? new Error('handler threw a falsy value'));
      }
      done(out, null);
    });
  }

  /**
   * The handler returned or threw (or was given up on: see abortHandler): free the slot, then
   * record the outcome. Once per attempt: a thenable that calls back twice, or a handler
   * settling after it was given up on, changes nothing.
   */
  private finished(e: Entry, result: unknown, error: unknown) {
    if (e.state !== 'running') return;
    e.finishedAt = performance.now();
    this.runTime.observe(e.finishedAt - e.startedAt);
    this.byType.observeRunTime(e.job, e.finishedAt - e.startedAt);
    e.state = 'finishing';
    // Cancelled while it ran: what it returns after its signal fired is not recorded
    // (handlers/types.ts); the cancel is acknowledged instead.
    if (error === null && e.cancelRequested) error = new JobAborted('cancelled');
    // Timed out: whatever it ended with after its signal fired (an AbortError, even a
    // result), the attempt failed for running too long.
    if (e.timedOut) error = e.timedOut;
    // Stopped by the stop's abort (or failing meanwhile): the stop hands the job back, its
    // attempt given back, rather than fail it for being interrupted.
    if (e.stopAsked && error !== null) e.released = true;
    this.running--;
    // A slot freed with no job waiting for it: claiming ahead may grow back (see claimAhead).
    if (!this.buffer.length && this.claimAhead < (this.o.prefetch ?? 0)) {
      this.claimAhead = Math.min(this.o.prefetch ?? 0, Math.max(1, this.claimAhead * 2));
    }
    this.pump();
    this.wakeFetcher();
    // The common case — success with nothing to store, no lease trouble, no fault
    // injection — goes straight to the completion batch.
    if (error === null && (result === undefined || result === null) && !e.lost && !e.released && !failpointsEnabled) {
      this.queueCompletion({ e, resultKey: null, tries: 0 });
      return;
    }
    this.settle(e, result, error)
      .catch((err) => this.log.error('recording a job outcome failed unexpectedly', { job: e.job.id, err }))
      .finally(() => this.forget(e));
  }

  // ---------------------------------------------------------------- completions

  private completions: PendingCompletion[] = [];
  private completionScheduled = false;

  /** Adds a completion to this turn's batch: one fenced statement for all of them. */
  private queueCompletion(pc: PendingCompletion) {
    this.completions.push(pc);
    if (this.completions.length >= 1_000) this.flushCompletions();
    else if (!this.completionScheduled) {
      this.completionScheduled = true;
      setImmediate(() => this.flushCompletions());
    }
  }

  private flushCompletions() {
    this.completionScheduled = false;
    const batch = this.completions;
    if (batch.length === 0) return;
    this.completions = [];
    const items = batch.map((pc) => ({ jobId: pc.e.lease.jobId, attempt: pc.e.lease.attempt, resultKey: pc.resultKey }));
    const write = armed('before_complete_commit')
      ? this.completeInTransaction(items)
      : ops.jobComplete(this.o.pool, { workerId: this.workerId, items });
    write.then(
      (accepted) => {
        // A refused retry may meet our own earlier try, recorded after all: those are asked
        // about apart, so the rest of the batch settles now.
        const unsure: PendingCompletion[] = [];
        for (const pc of batch) {
          if (accepted.has(pc.e.lease.jobId)) this.completionSettled(pc, 'accepted');
          else if (pc.tries > 0) unsure.push(pc);
          else this.completionSettled(pc, 'refused');
        }
        if (!unsure.length) return;
        void this.recordedEarlier(unsure.map((pc) => pc.e.lease)).then((ended) => {
          for (const pc of unsure) {
            const outcome = ended?.get(pc.e.lease.jobId);
            this.completionSettled(pc, ended === null ? 'unknown' : outcome === 'completed' ? 'accepted' : 'refused');
          }
        });
      },
      (err) => {
        // Said once per batch (one statement failed for all of them), when its first try fails.
        const first = batch.filter((pc) => pc.tries === 0).length;
        if (first) this.log.warn('could not record completions; retrying while their leases are ours', { jobs: first, err });
        for (const pc of batch) this.completionFailed(pc, err);
      },
    );
  }

  /**
   * How these attempts of ours ended, by the attempt history (null: it could not be read).
   * Asked when the fence refuses a retry: the try that errored (a timeout, a connection lost
   * after COMMIT) may have committed. Taken for a lost lease, our own completion would have
   * its result deleted while the job points to it.
   */
  private recordedEarlier(leases: Lease[]): Promise<Map<string, AttemptOutcome> | null> {
    return ops.attemptOutcomes(this.o.pool, { workerId: this.workerId, leases }).catch(() => null);
  }

  private completionSettled(pc: PendingCompletion, verdict: 'accepted' | 'refused' | 'unknown') {
    const { e } = pc;
    if (verdict === 'accepted') this.countOutcome('completed', e.job);
    else if (verdict === 'refused') {
      this.stats.refusedWrites++;
      this.log.warn('outcome refused by the fence: the lease was taken over; nothing written', { job: e.job.id, attempt: e.lease.attempt });
      // The job does not point to this attempt's result: drop the orphan blob.
      if (pc.resultKey) void this.o.results?.delete(pc.resultKey).catch(() => {});
    } else {
      this.log.warn('a retried completion was refused and the attempt history could not be read: an earlier try may have recorded it; its result is kept, and the history is read again later', {
        job: e.job.id,
        attempt: e.lease.attempt,
      });
      this.letGo(e.lease, { kind: e.job }); // settled from the history later (settleUnsure), and counted then
    }
    if (pc.done) pc.done(verdict === 'accepted');
    else this.forget(e);
  }

  /** A completion that errored (the database is away) is retried while our lease is still ours. */
  private completionFailed(pc: PendingCompletion, err: unknown) {
    if (pc.done) return pc.done(err instanceof Error ? err : new Error(String(err)));
    const delay = Math.min(100 * 2 ** pc.tries, 2_000);
    const unanswered = pc.unanswered || !answeredByServer(err);
    if (!transient(err) || this.pastRecordingTime(pc.e, delay)) {
      this.givenUp(pc.e, unanswered, err);
      this.forget(pc.e);
      return;
    }
    // A retry is dropped once the attempt is lost (taken over, or claimed again here: the
    // new attempt's writes are the new entry's; or given up by the watchdog) — said as given
    // up unconfirmed when a try whose answer was lost may have recorded it (see settle).
    setTimeout(() => {
      if (!pc.e.lost) return this.queueCompletion({ ...pc, tries: pc.tries + 1, unanswered });
      if (unanswered) this.givenUp(pc.e, true, err);
      this.forget(pc.e);
    }, delay);
  }

  /**
   * An outcome this process gives up writing. Left to the recover sweep when its lease ends —
   * unless a try whose answer was lost (`unanswered`) recorded it: then it stands, and the
   * attempt history says so later (settleUnsure).
   */
  private givenUp(e: Entry, unanswered: boolean, err: unknown) {
    const { lease } = e;
    const { jobId: job, attempt } = lease;
    if (unanswered) {
      this.log.error('could not confirm the outcome: a try whose answer was lost may have recorded it; if none did, the job will be recovered when its lease ends', { job, attempt, err });
    } else {
      this.log.error('could not record the outcome; the job will be recovered when its lease ends', { job, attempt, err });
    }
    this.letGo(lease, unanswered && { kind: e.job });
  }

  /** ctx.log: the runner's logger, naming the job and attempt. */
  logFor(e: Entry) {
    return this.log.child({ job: e.job.id, attempt: e.lease.attempt });
  }

  /** ctx.checkpoint(): a fenced write; a refusal means the lease is lost. */
  async checkpointFor(e: Entry, name: string, value: unknown): Promise<void> {
    if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
      throw new TypeError('checkpoint name must be a string of 1 to 200 characters');
    }
    const problem = jsonProblem(value);
    if (problem) throw new TypeError(`checkpoint ${name}: ${problem}`);
    if (Buffer.byteLength(JSON.stringify(value ?? null)) > 1024 * 1024) throw new TypeError(`checkpoint ${name}: over 1 MiB`);
    if (e.lost || e.released) throw new JobAborted(e.lost ?? 'shutdown');
    const saved = await ops.jobCheckpoint(this.o.pool, { workerId: this.workerId, lease: e.lease, name, value });
    if (!saved) {
      this.lose(e, 'lease_lost');
      throw new JobAborted('lease_lost');
    }
  }

  /** Stores a handler's result (if any) in the result store; returns its key. */
  private async storeResult(e: Entry, result: unknown): Promise<string | null> {
    if (result === undefined || result === null || !this.o.results) return null;
    let body: string | undefined;
    try {
      body = JSON.stringify(result);
    } catch (err) {
      throw new PermanentError(`the handler's result is not JSON-serializable: ${(err as Error).message}`);
    }
    // A function or a symbol (or a toJSON answering undefined) has no JSON at all: as
    // permanent as a cycle — every retry would return the same.
    if (body === undefined) throw new PermanentError(`the handler's result is not JSON-serializable: JSON has no ${typeof result === 'object' ? 'value for it' : typeof result}`);
    const key = await this.o.results.put(e.job.id, e.lease.attempt, Buffer.from(body));
    if (failpointsEnabled) await failpoint('after_result_write', [e.job.id]);
    return key;
  }

  /** Writes the attempt's outcome, fenced, retrying while our lease is still ours (the slower, general path). */
  private async settle(e: Entry, result: unknown, error: unknown) {
    const { job, lease } = e;
    if (e.released) return; // shutdown handed the lease back already
    if (e.lost) {
      this.stats.leaseLost++;
      this.log.warn('lease lost: the handler was aborted and its outcome is not recorded', {
        job: job.id,
        attempt: lease.attempt,
        reason: e.lost,
      });
      return;
    }
    /** Writes the outcome; `tries` counts the earlier tries that errored. */
    let write: (tries: number) => Promise<boolean>;
    /** What the attempt history says when a failure or cancel was recorded (a completion's refusal is the completion queue's). */
    let recordedAs: AttemptOutcome[] = [];
    let resultKey: string | null = null;
    if (error === null) {
      if (failpointsEnabled) await failpoint('after_handler', [job.id]);
      try {
        resultKey = await this.storeResult(e, result);
      } catch (err) {
        error = handlerVerdict(err).permanent ? err : new Error(`could not store the result: ${(err as Error).message}`);
      }
    }
    if (error === null) {
      if (failpointsEnabled) await failpoint('before_complete', [job.id]);
      // The completion queue counts it and logs a refusal; here only the answer matters.
      write = (tries) =>
        new Promise<boolean>((resolve, reject) =>
          this.queueCompletion({ e, resultKey, tries, done: (r) => (r instanceof Error ? reject(r) : resolve(true)) }),
        );
    } else if (e.cancelRequested) {
      recordedAs = ['cancelled'];
      write = async () => {
        const ok = (await ops.jobCancelAck(this.o.pool, { workerId: this.workerId, leases: [lease], unstarted: false })).has(lease.jobId);
        if (ok) this.countOutcome('cancelled', job);
        return ok;
      };
    } else {
      const thrown = describeThrown(error);
      // A RetryError names its retry's delay, a SnoozeError its snooze's; any other failure
      // backs off as its type says.
      const { permanent, afterMs, snooze } = handlerVerdict(error);
      const retryInMs = afterMs ?? backoffMs(attemptInBudget(job), this.o.backoffFor?.(job.type));
      recordedAs = snooze ? ['snoozed', 'cancelled'] : ['failed', 'retried', 'cancelled'];
      write = async () => {
        const status = await this.failer.submit({
          ...lease,
          error: truncate(thrown.message, 2_000),
          // A snooze is no error: its stack says nothing anyone needs.
          stack: thrown.stack && !snooze ? truncate(thrown.stack, 8_000) : null,
          permanent,
          backoffMs: retryInMs,
          snooze,
        });
        if (status === 'failed') this.countOutcome('failed', job);
        if (status === 'retrying') this.countOutcome('retried', job);
        if (status === 'cancelled') this.countOutcome('cancelled', job); // an operator's cancel this process had not heard of yet
        if (status === 'queued') this.countOutcome('snoozed', job); // only a snooze leaves it queued
        return status !== null;
      };
    }
    let unanswered = false; // a try errored without the server's answer: it may have committed
    for (let delay = 100, tries = 0; ; delay = Math.min(delay * 2, 2_000), tries++) {
      try {
        if (!(await write(tries))) {
          if (tries > 0) {
            // Our own earlier try, recorded after all? (see recordedEarlier)
            const ended = await this.recordedEarlier([lease]);
            const outcome = ended?.get(lease.jobId);
            if (outcome && recordedAs.includes(outcome)) {
              this.countRecorded(outcome, job);
              return;
            }
            if (ended === null) {
              this.log.warn('a retried outcome was refused and the attempt history could not be read: an earlier try may have recorded it; the history is read again later', {
                job: job.id,
                attempt: lease.attempt,
              });
              this.letGo(lease, { kind: job }); // settled from the history later (settleUnsure), and counted then
              return;
            }
          }
          this.stats.refusedWrites++;
          this.log.warn('outcome refused by the fence: the lease was taken over; nothing written', {
            job: job.id,
            attempt: lease.attempt,
          });
        }
        return;
      } catch (err) {
        if (!answeredByServer(err)) unanswered = true;
        if (!transient(err) || this.pastRecordingTime(e, delay)) {
          this.givenUp(e, unanswered, err);
          return;
        }
        // A completion's failure was said by the completion batch; a failure's or cancel's here, once.
        if (tries === 0 && error !== null) this.log.warn('could not record the outcome; retrying while the lease is ours', { job: job.id, attempt: lease.attempt, err });
        await sleep(delay);
        if (e.lost) {
          // Lost meanwhile (taken over, claimed again here, or given up by the watchdog): its
          // writes are over. A try whose answer was lost may have recorded it: said, and
          // settled by the attempt history later, as when given up here.
          if (unanswered) this.givenUp(e, true, err);
          return;
        }
      }
    }
  }

  /**
   * Whether a retry `delayMs` from now would come too late: past our lease (the renewals
   * failing too), or past RECORD_WITHIN_LEASES leases after the handler ended (the renewals
   * succeeding while the outcome cannot be written, which would otherwise keep the job
   * running here for ever).
   */
  private pastRecordingTime(e: Entry, delayMs: number) {
    const at = performance.now() + delayMs;
    return at - e.renewedAt > this.o.leaseMs || this.recordingOverdue(e, at);
  }

  /** A finished handler's outcome still unwritten RECORD_WITHIN_LEASES leases after it ended, at `at`. */
  private recordingOverdue(e: Entry, at: number) {
    return e.finishedAt !== undefined && at - e.finishedAt > RECORD_WITHIN_LEASES * this.o.leaseMs;
  }

  private lose(e: Entry, reason: AbortReason) {
    if (e.lost || e.released) return;
    e.lost = reason;
    this.letGo(e.lease);
    if (e.state === 'running') this.abortHandler(e, reason);
    if (e.state === 'buffered') {
      // Never started: nothing to abort. The lease is not ours any more (or may not be):
      // whoever holds the job now, or the recover sweep, takes it from here.
      this.stats.leaseLost++;
      this.unbuffer(e);
    }
  }

  /**
   * Aborts a running handler: its lease is lost, or an operator cancelled it. Node cannot
   * stop a handler that ignores its signal, so after abandonAfterMs (a lease) its attempt
   * ends as if it had thrown the abort: the slot is freed, a cancel acknowledged (the job
   * ends `cancelled`), a lost lease left to whoever holds the job now. Otherwise such a
   * handler would hold its slot for good, and a cancelled job would stay `running`, its
   * lease renewed, for ever. What it does afterwards is not recorded (the fence refuses it).
   */
  private abortHandler(e: Entry, reason: AbortReason | JobTimedOut) {
    const error = reason instanceof JobTimedOut ? reason : new JobAborted(reason);
    e.ac.abort(error);
    const waitMs = this.o.abandonAfterMs ?? this.o.leaseMs;
    setTimeout(() => {
      if (e.state !== 'running' || e.released) return;
      this.log.warn('the handler ignored its abort signal: its slot is freed, and what it does from now on is not recorded', {
        job: e.job.id,
        attempt: e.lease.attempt,
        reason: reason instanceof JobTimedOut ? 'timed_out' : reason,
        waitedMs: waitMs,
      });
      this.finished(e, undefined, error);
    }, waitMs).unref();
  }

  /**
   * A handler past its type's time limit: its signal is aborted and its attempt fails (the
   * lease is still ours: the failure is written under it), now if it stops, or after
   * abandonAfterMs if it ignores the signal. Without a limit a handler that never settles
   * would hold its job, its lease renewed, until an operator cancelled it.
   */
  private timeOut(e: Entry) {
    const timeoutMs = Math.round(e.deadline - e.startedAt);
    e.timedOut = new JobTimedOut(timeoutMs);
    this.log.warn('the handler ran past its time limit: its signal is aborted and the attempt fails', { job: e.job.id, attempt: e.lease.attempt, timeoutMs });
    this.abortHandler(e, e.timedOut);
  }

  /**
   * Jobs claimed ahead that have waited PREFETCH_HOLD_MS for a slot go back to their queue
   * (attempt given back, ringing at the front), for a worker with a free slot — or for this
   * one, when a slot frees. Claiming ahead is halved (see claimAhead).
   */
  private handBackWaiting(now: number) {
    const holdMs = this.o.prefetchHoldMs ?? PREFETCH_HOLD_MS;
    // (The buffer is in priority order, so those that waited longest may be anywhere in it.)
    const overdue = (e: Entry) => now - e.bufferedAt >= holdMs;
    if (this.stopping || !this.buffer.some(overdue)) return;
    const waited: Entry[] = [];
    let kept = 0;
    for (const e of this.buffer) {
      if (overdue(e)) waited.push(e);
      else this.buffer[kept++] = e;
    }
    this.buffer.length = kept;
    this.claimAhead = Math.floor(this.claimAhead / 2);
    this.log.info('jobs claimed ahead waited too long for a slot: handed back to their queue', {
      jobs: waited.length,
      holdMs,
      claimAhead: this.claimAhead,
    });
    this.handBack(waited, `claimed ahead, no slot freed within ${holdMs} ms; lease handed back`);
  }

  /** Jobs taken out of the buffer, not started, handed back to their queue (attempt given back). */
  private handBack(entries: Entry[], reason: string) {
    for (const e of entries) {
      e.released = true;
      this.forget(e);
    }
    // Failed, it is tried again (releaseUnrun, from the fetch loop): those jobs are leased
    // here, run nowhere, and no longer renewed.
    const p = this.release(entries, reason, true).then((ok) => {
      this.handingBack.delete(p);
      // Kept on file until then: if this process dies first, its supervisor releases them.
      if (ok) return this.ledger?.forget(entries.filter((e) => e.ledgered).map((e) => e.lease));
      this.handBackInDoubt = true;
      this.wakeFetcher();
    });
    this.handingBack.add(p);
  }

  // ---------------------------------------------------------------- heartbeat

  /**
   * The local lease watchdog: a job whose renewals have not succeeded for almost a whole
   * lease is aborted before the database may let another worker take it. It counts from
   * when the last successful renewal (or the claim) was sent, which is no later than the
   * database's now() that set the lease's end, and gives the job up on the last tick before
   * leaseGuardMs (lib/lease.ts) short of that end: the handler is told to stop while the job is still
   * ours, not up to a tick after a new owner may have started it. On its own timer, not only
   * on heartbeat ticks: those come a heartbeat interval apart, and one falling just short of
   * the lease's end would leave the handler running that much longer next to a new owner.
   */
  private watchdog() {
    const now = performance.now();
    this.handBackWaiting(now);
    // A failed hand-back is tried again by the fetch loop, which may be waiting for a slot.
    if (this.handBackInDoubt) this.wakeFetcher();
    const giveUpAfter = giveUpAfterMs(this.o);
    for (const e of this.active.values()) {
      if (now - e.renewedAt >= giveUpAfter) this.lose(e, 'lease_expired_locally');
      else if (now > e.deadline && e.state === 'running' && !e.timedOut && !e.lost && !e.released) this.timeOut(e);
      else if (e.state === 'finishing' && !e.lost && !e.released && this.recordingOverdue(e, now)) {
        // Its outcome could not be written (a result store that never answers, a write the
        // database keeps refusing) while its lease was renewed: no more renewals, so the lease
        // ends and the recover sweep moves the job on (retried, failed, or cancelled if asked).
        this.log.error('the outcome of a finished handler could not be recorded within a lease: its lease is no longer renewed, and unless the outcome is written before it ends, the job will be recovered', {
          job: e.job.id,
          attempt: e.lease.attempt,
        });
        this.lose(e, 'outcome_not_recorded');
        this.forget(e);
      }
    }
  }

  private async heartbeatTick() {
    this.heartbeatTicks++;
    // The watchdog first: it must fire even while the renewal itself hangs or fails.
    this.watchdog();
    void this.settleOldLetGo();
    if (this.heartbeatBusy || isSkipped('heartbeat')) return;
    this.heartbeatBusy = true;
    const renewable = () => [...this.active.values()].filter((e) => !e.lost && !e.released);
    const sentAt = performance.now();
    try {
      // The worker row's report apart from the renewals: its failure must not throw away
      // renewals that committed (and the lost leases and cancel requests they tell of).
      const [leases, report] = await Promise.allSettled([
        renewable().length ? this.renewLeases(renewable, (e) => e.lease) : null,
        ops.workerHeartbeat(this.o.heartbeatPool, this.workerId, this.metrics()),
      ]);
      if (report.status === 'rejected' && !this.reportFailing) this.log.warn('could not update this worker\'s row (the workers page shows it late)', { err: report.reason });
      this.reportFailing = report.status === 'rejected';
      if (report.status === 'fulfilled' && (report.value.quiet || sentAt > this.quietNowAt)) this.setQuiet(report.value.quiet, report.value.quietToken);
      if (leases.status === 'rejected') throw leases.reason;
      // Nothing to renew, nothing sent: not a renewal that succeeded ("succeed again" while the
      // database is still down would mislead whoever reads the log after an outage).
      if (!leases.value) return;
      this.heartbeatAnswers++;
      if (this.heartbeatFailing) this.log.info('lease renewals succeed again');
      this.heartbeatFailing = false;
      const { renewed, busy, renewing: entries, sentAt: renewalSentAt } = leases.value;
      for (const e of entries) {
        if (this.active.get(e.job.id) !== e) continue; // finished meanwhile
        // Its row was locked by another transaction: tried again next tick; the watchdog
        // aborts the handler if that lasts a whole lease.
        if (busy.has(e.job.id)) continue;
        const r = renewed.get(e.job.id);
        if (!r) {
          if (e.state !== 'finishing') this.lose(e, 'lease_lost');
          continue;
        }
        e.renewedAt = renewalSentAt;
        if (r.cancelRequested && !e.cancelRequested) {
          e.cancelRequested = true;
          if (e.state === 'running') this.abortHandler(e, 'cancelled');
          if (e.state === 'buffered') {
            this.unbuffer(e);
            this.ackUnstartedCancel(e);
          }
        }
      }
    } catch (err) {
      if (!this.heartbeatFailing) {
        this.log.warn('lease renewal failed; jobs keep running until their leases would end', { err });
      }
      this.heartbeatFailing = true;
    } finally {
      this.heartbeatBusy = false;
    }
  }

  /** What this worker id's earlier incarnations reported (ops.workerRegister): its reports add to it. */
  private reportedBefore: Record<string, unknown> = {};

  /** What this process reports with each heartbeat (see lib/queue/histogram.ts). */
  metrics() {
    const now = this.metricsNow();
    // A new id (the usual case): this process's own counts.
    if (!Object.keys(this.reportedBefore).some((k) => k !== 'quiet')) return now;
    // The sums of both, and this process's gauges (addReport leaves those out).
    const sums = addReport(addReport({}, this.reportedBefore), now);
    return { ...now, ...sums, inFlight: now.inFlight, running: now.running, quiet: now.quiet, rssBytes: now.rssBytes };
  }

  private metricsNow() {
    return {
      ...this.stats,
      notifyFallbacks: this.o.doorbell.notifyFallbacks ?? 0,
      inFlight: this.active.size,
      running: this.running,
      // Acknowledged: the token of the quiet request it runs by (false while it claims). The
      // workers page says "quiet" once the report names the current request, "quieting" before;
      // sent a heartbeat after the request was read, when no claim round begun before it is
      // under way (claimingRound).
      quiet: this.quiet && !this.claimingRound ? (this.quietToken ?? true) : false,
      queueWaitMs: this.queueWait.snapshot(),
      runTimeMs: this.runTime.snapshot(),
      byType: this.byType.snapshot(),
      // The process's resident memory (the workers page shows it: a leak, or a handler that
      // holds too much, is seen before the kernel's OOM killer ends the process).
      rssBytes: process.memoryUsage.rss(),
    };
  }

  // ---------------------------------------------------------------- schedules

  private scheduleBusy = false;
  private scheduleError = '';
  private scheduleErrorAt = 0;

  /** Enqueues due schedule ticks; every process tries, exactly one wins each tick. */
  private async scheduleTick() {
    if (this.scheduleBusy || this.stopping) return;
    this.scheduleBusy = true;
    try {
      const made = await ops.scheduleTick(this.o.pool, { doorbell: this.o.doorbell });
      for (const m of made) this.log.debug('schedule tick enqueued', { job: m.id, queue: m.queue });
    } catch (err) {
      // Ticks come four times a second: a schedule that keeps failing is told once a minute.
      const said = String((err as Error)?.message ?? err);
      if (said !== this.scheduleError || performance.now() - this.scheduleErrorAt > 60_000) {
        this.scheduleError = said;
        this.scheduleErrorAt = performance.now();
        this.log.warn('schedule tick failed; next tick retries', { err });
      }
    } finally {
      this.scheduleBusy = false;
    }
  }

  // ---------------------------------------------------------------- recover

  private statisticsRefused = false;

  private noteStatistics(outcome: 'analyzed' | 'refused' | null) {
    if (outcome === 'analyzed') this.log.info('analyzed the jobs table: it had rows but no planner statistics yet');
    if (outcome === 'refused' && !this.statisticsRefused) {
      this.statisticsRefused = true;
      this.log.warn('the jobs table has no planner statistics and this role may not ANALYZE it: claims may read the whole backlog until autovacuum does (or its owner runs ANALYZE jobs)');
    }
  }

  private async recoverTick() {
    if (this.recoverBusy || this.stopping) return;
    this.recoverBusy = true;
    try {
      const r = await ops.recoverSweep(this.o.pool, {
        doorbell: this.o.doorbell,
        signalGraceMs: this.o.signalGraceMs,
        aliveWithinMs: this.o.leaseMs,
        // If this process freezes mid-sweep, the server frees the sweep lock after this long.
        stallTimeoutMs: Math.max(1_000, this.o.recoverMs * 2),
        retention: this.o.retention,
        results: this.o.results,
        sweeper: this.workerId,
      });
      if (r?.pruned) {
        this.stats.pruned += r.pruned.deleted;
        if (r.pruned.deleted) this.log.info('retention: deleted finished jobs past their window', { deleted: r.pruned.deleted });
      }
      this.noteStatistics(r?.analyzed ?? null);
      if (r) {
        this.stats.recovered += r.expired.length;
        for (const x of r.expired) this.byType.count(x, 'leaseLost');
        this.stats.resignalled += r.queues.reduce((n, q) => n + q.pushed, 0);
      }
      if (r && (r.expired.length || r.queues.some((q) => q.pushed))) {
        const byStatus: Record<string, number> = {};
        for (const x of r.expired) byStatus[x.status] = (byStatus[x.status] ?? 0) + 1;
        // Re-rings alone at debug: without Redis a due job no worker serves is rung again
        // every sweep, and an info line for it every 5 s per process buried the rest.
        this.log[r.expired.length ? 'info' : 'debug']('recover: moved expired leases and re-rang waiting jobs', {
          expired: r.expired.length,
          ...byStatus,
          resignalled: r.queues.reduce((n, q) => n + q.pushed, 0),
        });
      }
    } catch (err) {
      this.log.warn('recover sweep failed; next tick retries', { err });
    } finally {
      this.recoverBusy = false;
    }
  }

  // ---------------------------------------------------------------- shutdown

  /**
   * Graceful stop: take no more jobs, let running ones finish within `graceMs`, then
   * abort the rest and, once they have stopped, hand their leases back so other workers can
   * take them at once.
   */
  async stop(graceMs: number) {
    if (this.stopping) return;
    this.stopping = true;
    // From now, not from after the claim in flight: the supervisor's own deadline runs from
    // its SIGTERM, and a claim on a slow database can take a while to answer.
    const deadline = performance.now() + graceMs;
    this.wakeFetcher();
    this.o.receiver?.close(); // ends a pending blocking pop
    this.pgReceiver?.wake();
    await this.fetchDone;
    await Promise.all(this.handingBack);
    // A claim whose answer was lost just before the stop (or a hand-back that failed): its
    // jobs are handed back now, not left to the sweep (which would spend their attempt: a job
    // of one attempt would fail unrun).
    if (this.claimInDoubt || this.handBackInDoubt) await this.releaseUnrun();
    await this.giveBackHeld();
    // Buffered jobs never started: hand them back at once, other workers can run them now.
    const buffered = this.buffer.splice(0);
    for (const e of buffered) {
      e.released = true;
      this.forget(e);
    }
    await this.release(buffered, 'worker shut down before starting the job; lease handed back', true);
    // Handlers still running are told to stop a little before the grace ends, and their jobs
    // handed back once they have: released at the abort, a job could start elsewhere while its
    // handler here was still writing. As the watchdog gives a handler leaseGuardMs to stop
    // while the job is still ours (at most STOP_ABORT_WAIT_MS here), taken from the grace, so
    // the hand-back comes by its end (before `docker stop`'s SIGKILL with the default grace;
    // with a grace shorter than the wait, or steps before it that overran, up to the wait
    // after the abort). Meanwhile their leases are still renewed, and a handler that returns a
    // result completes its job. One that ignores its signal is handed back all the same,
    // still running: it ends with the process.
    const stopWait = Math.min(leaseGuardMs(this.o.leaseMs), STOP_ABORT_WAIT_MS);
    while (this.running > 0 && performance.now() < deadline - stopWait) await sleep(20);
    const leftover = [...this.active.values()].filter((e) => e.state === 'running' && !e.lost);
    if (leftover.length) {
      for (const e of leftover) {
        e.stopAsked = true;
        e.ac.abort(new JobAborted('shutdown'));
      }
      const handBackBy = performance.now() + stopWait;
      while (leftover.some((e) => e.state === 'running') && performance.now() < handBackBy) await sleep(10);
      // Stopped with an error (see finished), or not stopped at all.
      const back = leftover.filter((e) => e.released || e.state === 'running');
      for (const e of back) e.released = true;
      await this.release(back, 'worker shut down before the job finished; lease handed back', false);
    }
    // Let outcomes already being written finish (bounded).
    const settleBy = performance.now() + 5_000;
    while ([...this.active.values()].some((e) => e.state === 'finishing') && performance.now() < settleBy) {
      await sleep(20);
    }
    for (const t of this.timers) clearInterval(t);
    this.o.receiver?.redis.off('ready', this.signalBack);
    // A heartbeat still in flight carries older counts: the last report lands after it (bounded),
    // or the row's counters could go down, which Prometheus reads as a counter reset.
    const beatBy = performance.now() + 5_000;
    while (this.heartbeatBusy && performance.now() < beatBy) await sleep(20);
    // No heartbeat runs from here: a cancel one acknowledged during the stop (ackUnstartedCancel)
    // has ended, or failed and is ended by releaseUnrun, not left to the sweep as a lost lease.
    await Promise.all(this.handingBack);
    if (this.handBackInDoubt) await this.releaseUnrun();
    // The results of pruned jobs still being deleted in the background: waited for (10 s at
    // most), or they stay on disk with no job pointing to them.
    const waited = new AbortController();
    await Promise.race([ops.resultsDeleting(this.o.results), sleep(10_000, undefined, { signal: waited.signal }).catch(() => {})]);
    waited.abort();
    await ops.workerStop(this.o.pool, this.workerId, this.metrics()).catch(() => {});
    await this.pgReceiver?.close();
  }

  /**
   * Ends as cancelled the leases a release refused: it refuses a job an operator asked to
   * cancel (it must not run again), whether or not this process had heard of the request.
   * Left alone, they would stay running under this worker until their leases expired.
   */
  private async cancelRefused(leases: readonly Lease[], released: readonly { jobId: string }[], unstarted: boolean) {
    const back = new Set(released.map((r) => r.jobId));
    const refused = leases.filter((l) => !back.has(l.jobId));
    if (!refused.length) return;
    const cancelled = await ops.jobCancelAck(this.o.pool, { workerId: this.workerId, leases: refused, unstarted });
    for (const kind of cancelled.values()) this.countOutcome('cancelled', kind);
    if (cancelled.size) this.log.info('ended cancelled jobs instead of handing them back', { jobs: [...cancelled.keys()] });
  }

  /**
   * Ends as cancelled a job claimed ahead whose cancel the heartbeat told of, never started.
   * Untracked from here on and no longer renewed: if the write fails, releaseUnrun ends it
   * (the release refuses a job with a cancel asked, and cancelRefused acknowledges it), not
   * the sweep a lease later as a lost lease of a job that never ran.
   */
  private ackUnstartedCancel(e: Entry) {
    const p = ops.jobCancelAck(this.o.pool, { workerId: this.workerId, leases: [e.lease], unstarted: true }).then(
      (cancelled) => {
        for (const kind of cancelled.values()) this.countOutcome('cancelled', kind);
      },
      () => {
        this.handBackInDoubt = true;
        this.wakeFetcher();
      },
    ).finally(() => this.handingBack.delete(p));
    this.handingBack.add(p);
  }

  /** Hands leases back; false when the database could not be asked (see handBackInDoubt). */
  /** `unstarted`: all of them claimed ahead and never started (else all were running). */
  private async release(entries: Entry[], reason: string, unstarted: boolean): Promise<boolean> {
    if (!entries.length) return true;
    try {
      const released = await ops.jobRelease(this.o.pool, {
        workerId: this.workerId,
        leases: entries.map((e) => e.lease),
        reason,
        unstarted,
        doorbell: this.o.doorbell,
      });
      this.log.info('handed leases back', { jobs: released.length, reason });
      await this.cancelRefused(
        entries.map((e) => e.lease),
        released,
        unstarted,
      );
      return true;
    } catch (err) {
      this.log.warn('could not hand leases back; unless a later try does, the recover sweep takes them when their leases end', { err });
      return false;
    }
  }
}

/** Whether buffered entry `a` starts after `b`: a higher priority number, or due later within a level. */
function runsAfter(a: Entry, b: Entry): boolean {
  return a.job.priority > b.job.priority || (a.job.priority === b.job.priority && a.dueAt > b.dueAt);
}

/**
 * How long, in leases, a finished handler's outcome may take to be recorded before the
 * worker gives the job up to the recover sweep.
 */
const RECORD_WITHIN_LEASES = 1;

/** Errors a retry of the same write may get past: the database away, busy, or in a conflict. */
function transient(err: unknown): boolean {
  if (!answeredByServer(err)) return !(err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError || err instanceof SyntaxError);
  const code = (err as { code?: string }).code ?? '';
  // 25006: a read-only transaction, as on a standby just after a failover: a new connection may reach the primary.
  return /^(08|40|53|55|57|58)/.test(code) || code === '25006';
}

/**
 * What a handler threw, as the job's error shows it: its message when it has one (a plain
 * object `{message, code}` too, as some libraries throw), else the value as JSON; never
 * "[object Object]", and never an exception of its own (an object with no prototype).
 */
export function describeThrown(x: unknown): { message: string; stack: string | null } {
  try {
    const o = (x !== null && typeof x === 'object') || typeof x === 'function' ? (x as { message?: unknown; name?: unknown; stack?: unknown }) : null;
    const stack = typeof o?.stack === 'string' ? o.stack : null;
    if (typeof o?.message === 'string' && o.message) return { message: o.message, stack };
    if (typeof o?.message === 'number' || typeof o?.message === 'boolean') return { message: String(o.message), stack };
    if (x instanceof Error) return { message: typeof o?.name === 'string' && o.name ? o.name : 'Error', stack };
    if (typeof x === 'string') return { message: x || 'the handler threw an empty string', stack: null };
    const json = JSON.stringify(x);
    return { message: json ?? `the handler threw ${typeof x}`, stack };
  } catch {
    return { message: 'the handler threw a value that cannot be read as text', stack: null };
  }
}

function truncate(s: string, max: number) {
  return s.length <= max ? s : s.slice(0, max - 1) + '…';
}
