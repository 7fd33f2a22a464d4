/** How the console reads a queue's wake-up signal (the overview and its queue table). */
import type { QueueStatsDto } from '../api/types';

type SignalInput = Pick<QueueStatsDto, 'due' | 'dueCapped' | 'dueUnhandled' | 'dueSuspect' | 'signalBacklog' | 'workersAlive' | 'controls'>;
type WaitInput = SignalInput & Pick<QueueStatsDto, 'queue' | 'oldestDueAgeMs'>;

/**
 * A queue's wake-up signal as an operator should read it: due jobs on a paused queue, on
 * one no live worker consumes, or of a type no live worker on it has a handler for, wait by
 * design — no ring is missing for them, and Recover would not ring them (its sweep rings only
 * what live workers can take). A limited queue (a concurrency or rate limit: a row of
 * controls) is claimed by polling under its lock, never from its Redis list: its due jobs
 * wait for the limit, not for a ring. Suspects (a likely poison) wait for a worker that
 * holds no other suspect. Only the rest, beyond the ids in Redis, miss their wake-up.
 */
export type QueueSignal =
  | { kind: 'paused' | 'unserved' | 'limited'; due: number }
  | { kind: 'served'; missing: number | null; unhandled: number; suspect: number };

export function queueSignal(q: SignalInput): QueueSignal {
  if (q.controls?.paused) return { kind: 'paused', due: q.due };
  if (q.workersAlive === 0) return { kind: 'unserved', due: q.due };
  if (q.controls) return { kind: 'limited', due: q.due };
  // All counted up to the server's cap (dueCapped): the missing ids are judged within it.
  const unhandled = q.dueUnhandled;
  const suspect = q.dueSuspect ?? 0;
  const runnable = q.due - unhandled - suspect;
  return { kind: 'served', unhandled, suspect, missing: q.signalBacklog === null ? null : Math.max(0, runnable - q.signalBacklog) };
}

/**
 * Over every queue: due jobs missing a wake-up, and those waiting on paused, unserved or
 * limited queues, for a handler, or as suspects for their turn. `atLeast`: a sum over a queue whose due jobs were counted only up to the
 * cap, so the true figure may be larger (60,000 on a paused queue read "10,000" without it).
 */
export function signalGaps(queues: readonly SignalInput[]) {
  const out = {
    missing: 0,
    paused: 0,
    unserved: 0,
    limited: 0,
    unhandled: 0,
    suspect: 0,
    /** Ids in Redis beyond the due jobs, on queues whose due jobs were all counted: rings of jobs cancelled, moved or claimed meanwhile, or rung twice. */
    stale: 0,
    atLeast: { missing: false, paused: false, unserved: false, limited: false, unhandled: false, suspect: false },
  };
  for (const q of queues) {
    const s = queueSignal(q);
    // On any queue (a worker that starts on an unserved one pops them too).
    if (!q.dueCapped && q.signalBacklog !== null) out.stale += Math.max(0, q.signalBacklog - q.due);
    if (s.kind === 'served') {
      out.missing += s.missing ?? 0;
      out.unhandled += s.unhandled;
      out.suspect += s.suspect;
      if (q.dueCapped && s.missing) out.atLeast.missing = true;
      if (q.dueCapped && s.unhandled) out.atLeast.unhandled = true;
      if (q.dueCapped && s.suspect) out.atLeast.suspect = true;
    } else {
      out[s.kind] += s.due;
      if (q.dueCapped) out.atLeast[s.kind] = true;
    }
  }
  return out;
}

/** A count from signalGaps as said: "≥ 10,000" when it may be larger. */
export const gapCount = (n: number, atLeast: boolean, format: (n: number) => string) => `${atLeast ? '≥ ' : ''}${format(n)}`;

/**
 * The overview's "oldest due job waiting": the queue whose oldest due job has waited longest
 * among those a worker should be taking from now (served or limited), with its age; apart,
 * the longest wait on queues whose due jobs all wait by design (paused, no live worker, or
 * every due job of a type no live worker handles or a suspect waiting its turn), which used
 * to turn the card red while the panel below said those jobs wait on purpose.
 */
export type HeldWhy = 'paused' | 'no worker' | 'no handler or suspects';
export function oldestWaiting(queues: readonly WaitInput[]): {
  taken: { queue: string; ageMs: number } | null;
  held: { queue: string; ageMs: number; why: HeldWhy } | null;
} {
  let taken: { queue: string; ageMs: number } | null = null;
  let held: { queue: string; ageMs: number; why: HeldWhy } | null = null;
  for (const q of queues) {
    if (q.oldestDueAgeMs === null) continue;
    const s = queueSignal(q);
    const why: HeldWhy | null =
      s.kind === 'paused' ? 'paused' : s.kind === 'unserved' ? 'no worker' : s.kind === 'served' && !q.dueCapped && s.unhandled + s.suspect >= q.due ? 'no handler or suspects' : null;
    if (why) {
      if (!held || q.oldestDueAgeMs > held.ageMs) held = { queue: q.queue, ageMs: q.oldestDueAgeMs, why };
    } else if (!taken || q.oldestDueAgeMs > taken.ageMs) taken = { queue: q.queue, ageMs: q.oldestDueAgeMs };
  }
  return { taken, held };
}
