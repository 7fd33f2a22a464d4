/** How the console reads a queue's wake-up signal (the overview and its queue table). */
import type { QueueStatsDto } from '../api/types';

/** Due jobs counted up to this many per queue (console-stats.ts): the missing ids are judged within it. */
const DUE_COUNTED = 10_000;

/**
 * A queue's wake-up signal as an operator should read it: due jobs on a paused queue, or on
 * one no live worker consumes, wait by design — no ring is missing for them, and Recover
 * would not ring them (its sweep rings only what live workers can take). Only on a served
 * queue are due jobs beyond the ids in Redis missing their wake-up.
 */
export type QueueSignal = { kind: 'paused' | 'unserved'; due: number } | { kind: 'served'; missing: number | null };

export function queueSignal(q: Pick<QueueStatsDto, 'due' | 'signalBacklog' | 'workersAlive' | 'controls'>): QueueSignal {
  if (q.controls?.paused) return { kind: 'paused', due: q.due };
  if (q.workersAlive === 0) return { kind: 'unserved', due: q.due };
  return { kind: 'served', missing: q.signalBacklog === null ? null : Math.max(0, Math.min(q.due, DUE_COUNTED) - q.signalBacklog) };
}

/** Over every queue: due jobs missing a wake-up (served queues), and those waiting on paused or unserved ones. */
export function signalGaps(queues: readonly Pick<QueueStatsDto, 'due' | 'signalBacklog' | 'workersAlive' | 'controls'>[]) {
  const out = { missing: 0, paused: 0, unserved: 0 };
  for (const q of queues) {
    const s = queueSignal(q);
    if (s.kind === 'served') out.missing += s.missing ?? 0;
    else out[s.kind] += s.due;
  }
  return out;
}
