/** How the console reads a queue's wake-up signal (the overview and its queue table). */
import type { QueueStatsDto } from '../api/types';

type SignalInput = Pick<QueueStatsDto, 'due' | 'dueCapped' | 'dueUnhandled' | 'signalBacklog' | 'workersAlive' | 'controls'>;

/**
 * A queue's wake-up signal as an operator should read it: due jobs on a paused queue, on
 * one no live worker consumes, or of a type no live worker on it has a handler for, wait by
 * design — no ring is missing for them, and Recover would not ring them (its sweep rings only
 * what live workers can take). Only the rest, beyond the ids in Redis, miss their wake-up.
 */
export type QueueSignal = { kind: 'paused' | 'unserved'; due: number } | { kind: 'served'; missing: number | null; unhandled: number };

export function queueSignal(q: SignalInput): QueueSignal {
  if (q.controls?.paused) return { kind: 'paused', due: q.due };
  if (q.workersAlive === 0) return { kind: 'unserved', due: q.due };
  // Both counted up to the server's cap (dueCapped): the missing ids are judged within it.
  const unhandled = q.dueUnhandled;
  const runnable = q.due - unhandled;
  return { kind: 'served', unhandled, missing: q.signalBacklog === null ? null : Math.max(0, runnable - q.signalBacklog) };
}

/**
 * Over every queue: due jobs missing a wake-up, and those waiting on paused or unserved queues
 * or for a handler. `atLeast`: a sum over a queue whose due jobs were counted only up to the
 * cap, so the true figure may be larger (60,000 on a paused queue read "10,000" without it).
 */
export function signalGaps(queues: readonly SignalInput[]) {
  const out = { missing: 0, paused: 0, unserved: 0, unhandled: 0, atLeast: { missing: false, paused: false, unserved: false, unhandled: false } };
  for (const q of queues) {
    const s = queueSignal(q);
    if (s.kind === 'served') {
      out.missing += s.missing ?? 0;
      out.unhandled += s.unhandled;
      if (q.dueCapped && s.missing) out.atLeast.missing = true;
      if (q.dueCapped && s.unhandled) out.atLeast.unhandled = true;
    } else {
      out[s.kind] += s.due;
      if (q.dueCapped) out.atLeast[s.kind] = true;
    }
  }
  return out;
}

/** A count from signalGaps as said: "≥ 10,000" when it may be larger. */
export const gapCount = (n: number, atLeast: boolean, format: (n: number) => string) => `${atLeast ? '≥ ' : ''}${format(n)}`;
