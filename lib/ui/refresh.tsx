'use client';
/**
 * Live refresh, as the operator sets it: an interval (persisted), a pause, and the
 * automatic pause while the tab is hidden. Every polling query takes its interval from
 * useRefreshInterval(), which is false whenever refresh is paused for any reason.
 *
 * Selecting rows does not pause it: the lists update rows in place (nothing moves under
 * the cursor), so a selected job goes on showing what it is now — a selected running job
 * that completes says so, where a held list let its countdown tick on past the end.
 */
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';

export const INTERVALS = [1000, 2000, 5000, 10_000, 30_000] as const;
const KEY = 'leasehold-refresh-ms';

interface RefreshState {
  intervalMs: number;
  paused: boolean;
  hidden: boolean;
  setIntervalMs(ms: number): void;
  setPaused(p: boolean): void;
}

const Ctx = createContext<RefreshState | null>(null);

export function RefreshProvider({ children }: { children: ReactNode }) {
  const [intervalMs, setIntervalState] = useState(2000);
  const [paused, setPaused] = useState(false);
  const [hidden, setHidden] = useState(false);
  useEffect(() => {
    const saved = Number(localStorage.getItem(KEY));
    if ((INTERVALS as readonly number[]).includes(saved)) setIntervalState(saved);
    const onVis = () => setHidden(document.visibilityState === 'hidden');
    onVis();
    document.addEventListener('visibilitychange', onVis);
    return () => document.removeEventListener('visibilitychange', onVis);
  }, []);
  const setIntervalMs = useCallback((ms: number) => {
    setIntervalState(ms);
    localStorage.setItem(KEY, String(ms));
  }, []);
  const value = useMemo(() => ({ intervalMs, paused, hidden, setIntervalMs, setPaused }), [intervalMs, paused, hidden, setIntervalMs]);
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export function useRefresh(): RefreshState {
  const c = useContext(Ctx);
  if (!c) throw new Error('useRefresh outside RefreshProvider');
  return c;
}

/** Why refresh is paused, or null while it runs. */
export function pauseReason(r: Pick<RefreshState, 'paused' | 'hidden'>): string | null {
  if (r.paused) return 'paused';
  if (r.hidden) return 'paused while the tab is hidden';
  return null;
}

/** The polling interval for queries: false while paused for any reason. */
export function useRefreshInterval(): number | false {
  const r = useRefresh();
  return pauseReason(r) ? false : r.intervalMs;
}
