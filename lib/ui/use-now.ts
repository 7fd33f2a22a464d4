'use client';
import { useEffect, useState } from 'react';
import { useClockOffset } from '../api/clock';

/**
 * The database's clock as this browser knows it, re-rendering every `tickMs`: lease
 * countdowns and heartbeat ages tick on their own between refreshes.
 */
export function useDbNow(tickMs = 1000): number {
  const offset = useClockOffset();
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    // Align ticks to whole seconds so every countdown on the page changes together.
    let timer: ReturnType<typeof setTimeout>;
    const tick = () => {
      setNow(Date.now());
      timer = setTimeout(tick, tickMs - (Date.now() % tickMs));
    };
    timer = setTimeout(tick, tickMs - (Date.now() % tickMs));
    return () => clearTimeout(timer);
  }, [tickMs]);
  return now + offset;
}
