'use client';
/**
 * Live refresh, as the operator sets it: an interval (persisted), a pause, and the
 * automatic pauses — while the tab is hidden, and while a view has rows selected (a view
 * reports its selection with useHoldRefresh). Every polling query takes its interval
 * from useRefreshInterval(), which is false whenever refresh is paused for any reason.
 */
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';

export const INTERVALS = [1000, 2000, 5000, 10_000, 30_000] as const;
const KEY = 'leasehold-refresh-ms';

interface RefreshState {
  intervalMs: number;
  paused: boolean;
  hidden: boolean;
  holds: number;
  setIntervalMs(ms: number): void;
  setPaused(p: boolean): void;
  hold(delta: number): void;
}

const Ctx = createContext<RefreshState | null>(null);

export function RefreshProvider({ children }: { children: ReactNode }) {
  const [intervalMs, setIntervalState] = useState(2000);
  const [paused, setPaused] = useState(false);
  const [hidden, setHidden] = useState(false);
  const [holds, setHolds] = useState(0);
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
  const hold = useCallback((d: number) => setHolds((h) => Math.max(0, h + d)), []);
  const value = useMemo(() => ({ intervalMs, paused, hidden, holds, setIntervalMs, setPaused, hold }), [intervalMs, paused, hidden, holds, setIntervalMs, hold]);
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export function useRefresh(): RefreshState {
  const c = useContext(Ctx);
  if (!c) throw new Error('useRefresh outside RefreshProvider');
  return c;
}

/** Why refresh is paused, or null while it runs. */
export function pauseReason(r: Pick<RefreshState, 'paused' | 'hidden' | 'holds'>): string | null {
  if (r.paused) return 'paused';
  if (r.holds > 0) return 'paused while rows are selected';
  if (r.hidden) return 'paused while the tab is hidden';
  return null;
}

/** The polling interval for queries: false while paused for any reason. */
export function useRefreshInterval(): number | false {
  const r = useRefresh();
  return pauseReason(r) ? false : r.intervalMs;
}

/** While `active`, hold live refresh (a view with selected rows). */
export function useHoldRefresh(active: boolean) {
  const { hold } = useRefresh();
  useEffect(() => {
    if (!active) return;
    hold(1);
    return () => hold(-1);
  }, [active, hold]);
}
