/**
 * Keeps P worker processes alive. A process that dies — even by SIGKILL from a poison
 * job — is replaced at once; one that keeps dying soon after start is replaced with a
 * growing back-off, so a crash loop cannot spin the machine. Its jobs are not lost: their
 * leases expire and the recover sweep (run by the surviving processes) moves them on.
 */
import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../lib/log';
import { projectRoot, tsxImport } from './bootstrap';

export interface SupervisorOptions {
  processes: number;
  /** Arguments for each worker process (worker/process.ts). */
  args: string[];
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** A process that dies within this long of its start counts as a crash loop. */
  minUptimeMs?: number;
  maxBackoffMs?: number;
  /** Told of each process that died (not one the supervisor stopped), e.g. to record it (ops.workerDied). */
  onDied?: (pid: number, exit: string) => void;
}

interface Slot {
  index: number;
  child: ChildProcess | null;
  startedAt: number;
  quickDeaths: number;
  restartTimer: NodeJS.Timeout | null;
}

export class Supervisor {
  private readonly slots: Slot[] = [];
  private stopping = false;
  /** Replacements made so far (tests read it). */
  restarts = 0;

  constructor(private readonly o: SupervisorOptions) {}

  start() {
    for (let i = 0; i < this.o.processes; i++) {
      const slot: Slot = { index: i, child: null, startedAt: 0, quickDeaths: 0, restartTimer: null };
      this.slots.push(slot);
      this.spawn(slot);
    }
  }

  get pids(): number[] {
    return this.slots.map((s) => s.child?.pid).filter((p): p is number => !!p);
  }

  private spawn(slot: Slot) {
    const child = fork(path.join(projectRoot, 'worker/process.ts'), this.o.args, {
      execArgv: ['--import', tsxImport],
      cwd: projectRoot,
      env: { ...this.o.env, LEASEHOLD_WORKER_INDEX: String(slot.index) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    slot.child = child;
    slot.startedAt = performance.now();
    child.on('exit', (code, signal) => this.onExit(slot, child, code, signal));
    // A fork that could not start (no memory or pids left, the directory gone) emits 'error'
    // and never 'exit': replaced like a process that died, not an uncaught error ending the
    // supervisor and every worker with it. (Other errors, a failed send or kill, come from a
    // running process, whose 'exit' follows in its time.)
    child.on('error', (err) => {
      this.o.log.error('could not start a worker process', { proc: slot.index, err });
      if (child.pid === undefined) this.onExit(slot, child, null, null);
    });
  }

  private onExit(slot: Slot, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null) {
    if (slot.child !== child) return;
    slot.child = null;
    if (this.stopping) return;
    const uptime = performance.now() - slot.startedAt;
    slot.quickDeaths = uptime < (this.o.minUptimeMs ?? 10_000) ? slot.quickDeaths + 1 : 0;
    const delay = slot.quickDeaths <= 1 ? 0 : Math.min(this.o.maxBackoffMs ?? 30_000, 250 * 2 ** (slot.quickDeaths - 1));
    this.o.log.warn('worker process died; replacing it', {
      proc: slot.index,
      pid: child.pid,
      code,
      signal,
      uptimeMs: Math.round(uptime),
      restartInMs: delay,
    });
    if (child.pid !== undefined) this.o.onDied?.(child.pid, signal ? `killed by ${signal}` : `exited with code ${code}`);
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = null;
      if (this.stopping) return;
      this.restarts++;
      this.spawn(slot);
    }, delay);
  }

  /** SIGTERM every process (each drains gracefully), SIGKILL whatever is left after `timeoutMs`. */
  async stop(timeoutMs: number) {
    this.stopping = true;
    const alive = this.slots.flatMap((s) => {
      if (s.restartTimer) clearTimeout(s.restartTimer);
      return s.child && s.child.exitCode === null && s.child.signalCode === null ? [s.child] : [];
    });
    const exits = alive.map((c) => new Promise<void>((r) => c.once('exit', () => r())));
    for (const c of alive) c.kill('SIGTERM');
    const killer = setTimeout(() => alive.forEach((c) => c.kill('SIGKILL')), timeoutMs);
    await Promise.all(exits);
    clearTimeout(killer);
  }
}
