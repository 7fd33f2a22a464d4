/**
 * Named fault-injection points, for the crash and chaos tests. Off unless the process
 * starts with LEASEHOLD_FAILPOINTS set; in production every call is a cheap no-op.
 *
 *   LEASEHOLD_FAILPOINTS="after_pop=kill,heartbeat=skip,mid_handler=stall:3000*2"
 *
 * Modes: `kill` (SIGKILL this process: a real kill -9, no finally blocks run),
 * `stall:<ms>` (wait), `skip` (the caller skips the action: see isSkipped). A `*N` suffix
 * fires at most N times in this process. With LEASEHOLD_FAILPOINTS_ONCE_DIR set, each
 * point fires once (or N times with `*N`) across every process sharing that directory (the
 * first to reach it wins), so the faults are counted however many processes race for them,
 * and a supervisor's replacement process does not die the same way forever.
 */
import fs from 'node:fs';
import path from 'node:path';

export type FailpointName =
  | 'after_register' // a worker process's row is written; its start has not finished (no claim yet)
  | 'after_pop' // a worker popped ids from the doorbell and has not claimed them yet
  | 'after_claim' // the claim committed; the handler has not started
  | 'mid_handler' // the handler is running
  | 'after_handler' // the handler returned (its side effects happened); nothing recorded yet
  | 'after_result_write' // the result blob is written; the completion is not
  | 'before_complete' // about to send the fenced completion
  | 'before_complete_commit' // the completion statement ran inside a transaction that is not committed yet
  | 'after_commit_before_push' // producer: the enqueue committed; the doorbell did not ring
  | 'heartbeat' // skip: the worker sends no lease renewals
  | 'push'; // skip: the producer never rings the doorbell

interface Point {
  mode: 'kill' | 'stall' | 'skip';
  ms: number;
  /** Firings left in this process (with a shared directory: until its markers are all taken). */
  remaining: number;
  /** Firings across the processes sharing LEASEHOLD_FAILPOINTS_ONCE_DIR. */
  across: number;
}

const onceDir = process.env.LEASEHOLD_FAILPOINTS_ONCE_DIR;
const points = new Map<string, Point>();
for (const part of (process.env.LEASEHOLD_FAILPOINTS ?? '').split(',')) {
  const m = /^\s*([a-z_]+)=(kill|skip|stall:(\d+))(?:\*(\d+))?\s*$/.exec(part);
  if (!m) continue;
  const mode = m[2]!.startsWith('stall') ? 'stall' : (m[2] as 'kill' | 'skip');
  const times = m[4] ? Number(m[4]) : null;
  points.set(m[1]!, { mode, ms: Number(m[3] ?? 0), remaining: onceDir ? Infinity : (times ?? Infinity), across: times ?? 1 });
}

export const failpointsEnabled = points.size > 0;

function claim(name: string, detail: unknown): Point | null {
  const p = points.get(name);
  if (!p || p.remaining <= 0) return null;
  if (onceDir) {
    const marker = JSON.stringify({ pid: process.pid, at: Date.now(), detail });
    for (let k = 1; k <= p.across; k++) {
      try {
        fs.writeFileSync(path.join(onceDir, markerFile(name, k)), marker, { flag: 'wx' });
        return p;
      } catch {
        // the k-th firing is another process's already
      }
    }
    p.remaining = 0; // every firing taken: markers are never removed
    return null;
  }
  p.remaining--;
  return p;
}

/** The marker the k-th firing (from 1) of a point leaves in the shared directory. */
export const markerFile = (name: string, k: number) => (k === 1 ? `${name}.fired` : `${name}.fired.${k}`);

/**
 * Reaches a kill or stall point. Resolves at once when the point is not armed. `detail`
 * (e.g. the job ids in hand) goes into the marker file, for the test to attribute the fault.
 */
export async function failpoint(name: FailpointName, detail?: unknown): Promise<void> {
  if (!failpointsEnabled) return;
  const p = points.get(name);
  if (!p || p.mode === 'skip') return;
  if (!claim(name, detail)) return;
  if (p.mode === 'kill') {
    process.stderr.write(`[failpoint] ${name}: SIGKILL pid ${process.pid}\n`);
    process.kill(process.pid, 'SIGKILL');
    await new Promise(() => {}); // never resumes
  }
  await new Promise((r) => setTimeout(r, p.ms));
}

/** True when a skip point is armed: the caller leaves its action out. */
export function isSkipped(name: FailpointName): boolean {
  if (!failpointsEnabled) return false;
  const p = points.get(name);
  return !!p && p.mode === 'skip' && p.remaining > 0;
}

/** True when a kill or stall point is armed (callers take a slower path only then). */
export function armed(name: FailpointName): boolean {
  if (!failpointsEnabled) return false;
  const p = points.get(name);
  return !!p && p.mode !== 'skip' && p.remaining > 0;
}
