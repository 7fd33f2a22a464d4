/**
 * The browser's clock offset from the database's. Every list and detail response carries
 * the database's now(); the offset is dbNow − the middle of the request's round trip,
 * taken from the sample with the shortest round trip among the recent ones (the least
 * uncertain). Lease countdowns and heartbeat ages use Date.now() + offset, so a laptop
 * whose clock is minutes off still shows a lease's true remaining time.
 */
import { useSyncExternalStore } from 'react';

interface Sample {
  offsetMs: number;
  rttMs: number;
  at: number;
}

let samples: Sample[] = [];
let offsetMs = 0;
const listeners = new Set<() => void>();

export function noteServerTime(dbNowIso: string | undefined | null, sentAt: number, receivedAt: number) {
  if (!dbNowIso) return;
  const db = Date.parse(dbNowIso);
  if (Number.isNaN(db)) return;
  samples.push({ offsetMs: db - (sentAt + receivedAt) / 2, rttMs: receivedAt - sentAt, at: receivedAt });
  samples = samples.filter((s) => receivedAt - s.at < 5 * 60_000).slice(-20);
  const best = samples.reduce((a, b) => (b.rttMs < a.rttMs ? b : a));
  if (Math.round(best.offsetMs) !== Math.round(offsetMs)) {
    offsetMs = best.offsetMs;
    for (const l of listeners) l();
  }
}

export const clockOffsetMs = () => offsetMs;
/** The database's clock as this browser best knows it (ms since epoch). */
export const dbNowMs = () => Date.now() + offsetMs;

export function useClockOffset(): number {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => offsetMs,
    () => 0,
  );
}
