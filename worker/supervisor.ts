/**
 * Keeps P worker processes alive. A process that dies — even by SIGKILL from a poison
 * job — is replaced at once; one that keeps dying soon after start is replaced with a
 * growing back-off, so a crash loop cannot spin the machine. Its jobs are not lost: told of
 * the death (onDied, with the worker id the process reported), the worker command ends their
 * leases at once (ops.workerDied), and the recover sweep of the surviving processes moves them
 * on; without the id, their leases run out first.
 * A process whose event loop stops beating (a handler that never yields) is killed after
 * stallKillMs and replaced the same way.
 */
import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Logger } from '../lib/log';
import type { Lease } from '../lib/queue/job';
import { readHeldLedger } from './held-ledger';
import { projectRoot, tsxImport } from './bootstrap';
import { EXIT_CONFIG } from './exit-codes';

export interface SupervisorOptions {
  processes: number;
  /** Arguments for each worker process (worker/process.ts). */
  args: string[];
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** A process that dies within this long of its start counts as a crash loop. */
  minUptimeMs?: number;
  maxBackoffMs?: number;
  /**
   * Told of each process that died, e.g. to record it and end its leases (ops.workerDied):
   * one the supervisor did not stop, and one that did not stop as asked (killed at the stop
   * deadline, or ended otherwise while it drained: it handed back no leases). `workerId` is
   * what the process reported when it was ready (undefined if it died before its report was
   * read). stop() waits for the promise it returns, so the record is written before the
   * supervisor exits.
   */
  onDied?: (pid: number, exit: string, workerId: string | undefined) => unknown;
  /**
   * Told, before onDied, of the jobs an ended process held claimed ahead and never started
   * (its held-ledger file: worker/held-ledger.ts), to give their attempts back (ops.jobRelease,
   * fenced on the worker id and attempt: one handed back or taken over since is left alone).
   * After any exit, a stop's too: a hand-back that failed as it stopped is made here.
   */
  onHeld?: (held: { workerId: string; leases: Lease[] }) => unknown;
  /** A process exited EXIT_CONFIG: it is not replaced, and this is told (the worker command stops with that code). */
  onRefused?: () => void;
  /**
   * A running (not stopped) process whose event loop has not beaten for this long is killed
   * and replaced: it has lost every lease already (its heartbeats cannot run). 0 = never.
   */
  stallKillMs?: number;
}

interface Slot {
  index: number;
  child: ChildProcess | null;
  startedAt: number;
  quickDeaths: number;
  restartTimer: NodeJS.Timeout | null;
  /** performance.now() of the child's last beat (or of its start). */
  lastBeat: number;
  stallKilled: number | null;
  /** The worker id the current process reported in its 'ready' message. */
  workerId: string | undefined;
  /** The current process's held-ledger file (LEASEHOLD_HELD_FILE). */
  ledgerFile: string;
}

export class Supervisor {
  private readonly slots: Slot[] = [];
  private stopping = false;
  /** A process reported ready: the module loads (a later EXIT_CONFIG is not final). */
  private everReady = false;
  /** Replacements made so far (tests read it). */
  restarts = 0;
  private stallTimer: NodeJS.Timeout | null = null;
  /** performance.now() of the stall check's last run (a gap means the supervisor itself did not run). */
  private lastCheck = 0;
  /** Set when stop() killed what had not stopped: its deadline (ms). */
  private stopKilledAfterMs: number | null = null;
  /** onDied's writes not yet settled (stop() waits for them). */
  private readonly reports = new Set<Promise<unknown>>();

  constructor(private readonly o: SupervisorOptions) {}

  start() {
    for (let i = 0; i < this.o.processes; i++) {
      const slot: Slot = { index: i, child: null, startedAt: 0, quickDeaths: 0, restartTimer: null, lastBeat: 0, stallKilled: null, workerId: undefined, ledgerFile: '' };
      this.slots.push(slot);
      this.spawn(slot);
    }
    const stallMs = this.o.stallKillMs ?? 0;
    if (stallMs > 0) {
      const everyMs = Math.min(1_000, stallMs / 4);
      this.lastCheck = performance.now();
      this.stallTimer = setInterval(() => this.killStalled(stallMs, everyMs), everyMs);
      this.stallTimer.unref();
    }
  }

  /** A child that beats no more while it runs (not SIGSTOPped: that is someone's choice) is killed. */
  private killStalled(stallMs: number, everyMs: number) {
    if (this.stopping) return;
    const now = performance.now();
    const slept = now - this.lastCheck > 3 * everyMs;
    this.lastCheck = now;
    if (slept) {
      // The supervisor itself did not run (Ctrl-Z then fg, a frozen cgroup, a debugger): the
      // children's beats may be waiting unread in their pipes (timers run before the pipes
      // are read). Judge them afresh from now.
      for (const slot of this.slots) slot.lastBeat = Math.max(slot.lastBeat, now);
      return;
    }
    for (const slot of this.slots) {
      const child = slot.child;
      if (!child?.pid || slot.stallKilled !== null || now - slot.lastBeat < stallMs) continue;
      // Stopped is not stalled; once continued, it gets a whole stallMs to beat again.
      if (stoppedBySignal(child.pid)) {
        slot.lastBeat = now;
        continue;
      }
      slot.stallKilled = now - slot.lastBeat;
      this.o.log.error('worker process has not run its event loop for too long (a handler that never yields?); killing it', {
        proc: slot.index,
        pid: child.pid,
        silentMs: Math.round(slot.stallKilled),
        limitMs: stallMs,
      });
      child.kill('SIGKILL');
    }
  }

  get pids(): number[] {
    return this.slots.map((s) => s.child?.pid).filter((p): p is number => !!p);
  }

  /**
   * Asks every process to quiet itself (worker/process.ts), saying why: those running now by a
   * message (one still starting takes it up once started), and each one started from now on (a
   * replacement for one that died) from its start — until an operator resumes one of them.
   */
  quietAll(why: string) {
    this.quietWhy = why;
    const seq = ++this.quietSeq;
    for (const { child: c } of this.slots) {
      if (c && c.connected && c.exitCode === null && c.signalCode === null) c.send({ type: 'quiet', why, seq }, (err: Error | null) => void err);
    }
  }
  private quietWhy: string | null = null;
  /** Numbers each quietAll: a process's 'resumed' names the one it ends (an older one is stale). */
  private quietSeq = 0;

  private spawn(slot: Slot) {
    slot.ledgerFile = path.join(os.tmpdir(), `leasehold-held-${process.pid}-${slot.index}-${this.restarts}-${randomBytes(4).toString('hex')}`);
    slot.startedAt = performance.now();
    slot.workerId = undefined;
    let child: ChildProcess;
    try {
      child = this.fork(slot);
    } catch (err) {
      // Node throws some failures of a fork (ENOMEM, E2BIG) rather than emit 'error': tried
      // again with the back-off, as a process that died at once, not an uncaught error ending
      // the supervisor, and every worker process with it, from inside a restart's timer.
      this.o.log.error('could not start a worker process', { proc: slot.index, err });
      slot.child = null;
      this.restartLater(slot, { err: (err as Error).message });
      return;
    }
    slot.child = child;
    // Start-up (connecting, loading the handlers module) is not a stall: a child is judged
    // from its first beat, or START_GRACE_MS after its start if it never beats (a handlers
    // module that blocks as it loads would otherwise hold its slot for ever).
    slot.lastBeat = slot.startedAt + START_GRACE_MS;
    slot.stallKilled = null;
    child.on('message', (m: { type?: string; workerId?: unknown; seq?: unknown }) => {
      // A late message of a child already replaced must not start its successor's clock.
      if (slot.child !== child) return;
      if (m?.type === 'alive' || m?.type === 'ready') slot.lastBeat = performance.now();
      if (m?.type === 'ready' && typeof m.workerId === 'string') slot.workerId = m.workerId;
      if (m?.type === 'ready') this.everReady = true;
      // An operator resumed one of them (Resume on the workers page): the quiet is called off,
      // and a process started from now on (a replacement) claims, rather than start quiet.
      // (Not a resume of an earlier quiet that crossed a newer SIGTSTP on its way here.)
      if (m?.type === 'resumed' && this.quietWhy !== null && m.seq === this.quietSeq) {
        this.quietWhy = null;
        this.o.log.info('a worker process was resumed: processes started from now on claim');
      }
    });
    child.on('exit', (code, signal) => this.onExit(slot, child, code, signal));
    // A fork that could not start for some reasons (no pids or file descriptors left, the
    // directory gone) emits 'error' and never 'exit': replaced like a process that died.
    // (Other errors, a failed send or kill, come from a running process, whose 'exit'
    // follows in its time.)
    child.on('error', (err) => {
      this.o.log.error('could not start a worker process', { proc: slot.index, err });
      if (child.pid === undefined) this.onExit(slot, child, null, null);
    });
  }

  private fork(slot: Slot): ChildProcess {
    return fork(path.join(projectRoot, 'worker/process.ts'), this.o.args, {
      execArgv: ['--import', tsxImport],
      // In the directory the workers were started from, as a handler's relative paths (a
      // `./uploads`, a .env) mean; this project's sources compiled with its own tsconfig
      // (tsx reads the working directory's otherwise).
      env: {
        TSX_TSCONFIG_PATH: path.join(projectRoot, 'tsconfig.json'),
        ...this.o.env,
        LEASEHOLD_WORKER_INDEX: String(slot.index),
        LEASEHOLD_HELD_FILE: slot.ledgerFile,
        ...(this.quietWhy ? { LEASEHOLD_START_QUIET: this.quietWhy, LEASEHOLD_START_QUIET_SEQ: String(this.quietSeq) } : {}),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
  }

  private onExit(slot: Slot, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null) {
    if (slot.child !== child) return;
    slot.child = null;
    this.releaseHeld(slot.ledgerFile);
    const how = slot.stallKilled !== null
      ? `killed by the supervisor: event loop blocked for ${Math.round(slot.stallKilled / 1000)} s`
      : signal === 'SIGKILL' && this.stopKilledAfterMs !== null
        ? `killed by the supervisor: not stopped ${Math.round(this.stopKilledAfterMs / 1000)} s after SIGTERM`
        : signal ? `killed by ${signal}` : `exited with code ${code}`;
    if (this.stopping) {
      // Stopped as asked, it drained, handed its leases back and exited 0. Killed at the stop
      // deadline (its event loop blocked?), or ended otherwise while it drained, it handed back
      // nothing: its leases end now, not a lease after the workers start again.
      if (code !== 0) this.died(child, how, slot.workerId);
      return;
    }
    // Final only while no process has come up: one that did loaded the same module, so a
    // replacement's refusal is something passing (replaced as usual), not the module's fault.
    if (code === EXIT_CONFIG && this.o.onRefused && !this.everReady) {
      // Said why in its own log line; its replacements would say the same, for ever.
      this.o.log.error('a worker process refused its configuration (the reason is logged above): not replacing it', { proc: slot.index, pid: child.pid });
      this.died(child, how, slot.workerId);
      this.o.onRefused();
      return;
    }
    this.died(child, how, slot.workerId);
    this.restartLater(slot, { pid: child.pid, code, signal });
  }

  /**
   * Starts the slot's next process: at once after a death, with a growing back-off after
   * quick ones in a row. A death is quick soon after the start, or before the process said it
   * was ready whenever that was: a database that drops packets fails the first connect only
   * after its 10 s timeout, and each replacement would otherwise start at once, for ever.
   */
  private restartLater(slot: Slot, fields: Record<string, unknown>) {
    const uptime = performance.now() - slot.startedAt;
    const quick = uptime < (this.o.minUptimeMs ?? 10_000) || slot.workerId === undefined;
    slot.quickDeaths = quick ? slot.quickDeaths + 1 : 0;
    const delay = slot.quickDeaths <= 1 ? 0 : Math.min(this.o.maxBackoffMs ?? 30_000, 250 * 2 ** (slot.quickDeaths - 1));
    this.o.log.warn('worker process died; replacing it', { proc: slot.index, ...fields, uptimeMs: Math.round(uptime), restartInMs: delay });
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = null;
      if (this.stopping) return;
      this.restarts++;
      this.spawn(slot);
    }, delay);
  }

  /** Tells onDied (after any release of held jobs: the lease it ends would let a peer take them first), and keeps what it returns for stop() to wait on. */
  private died(child: ChildProcess, how: string, workerId: string | undefined) {
    if (child.pid === undefined || !this.o.onDied) return;
    const pid = child.pid;
    this.report(Promise.all(this.reports).then(() => this.o.onDied!(pid, how, workerId)));
  }

  /** Reads and removes an ended process's held-ledger file, and tells onHeld of what it still held. */
  private releaseHeld(file: string) {
    const held = readHeldLedger(file);
    fs.rmSync(file, { force: true });
    fs.rmSync(`${file}.next`, { force: true }); // a compaction the kill cut short
    if (held?.leases.length && this.o.onHeld) this.report(Promise.resolve(this.o.onHeld(held)));
  }

  private report(p: Promise<unknown>) {
    const report = p.catch(() => {});
    this.reports.add(report);
    void report.finally(() => this.reports.delete(report));
  }

  /** SIGTERM every process (each drains gracefully), SIGKILL whatever is left after `timeoutMs`. */
  async stop(timeoutMs: number) {
    this.stopping = true;
    if (this.stallTimer) clearInterval(this.stallTimer);
    const alive = this.slots.flatMap((s) => {
      if (s.restartTimer) clearTimeout(s.restartTimer);
      return s.child && s.child.exitCode === null && s.child.signalCode === null ? [s.child] : [];
    });
    const exits = alive.map((c) => new Promise<void>((r) => c.once('exit', () => r())));
    for (const c of alive) c.kill('SIGTERM');
    const killer = setTimeout(() => {
      this.stopKilledAfterMs = timeoutMs;
      this.o.log.warn('worker processes did not stop in time; killing them', { pids: alive.map((c) => c.pid), afterMs: timeoutMs });
      alive.forEach((c) => c.kill('SIGKILL'));
    }, timeoutMs);
    await Promise.all(exits);
    clearTimeout(killer);
    await Promise.all(this.reports);
  }
}

/** Time a new process has to start before its silence counts (on top of stallKillMs). */
const START_GRACE_MS = 60_000;

/** The process is stopped (SIGSTOP, a debugger): state T or t in /proc (false where unknown). */
function stoppedBySignal(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'T' || state === 't';
  } catch {
    return false;
  }
}
