/**
 * A per-process memo for read models that every viewer polls (the dead-letter groups):
 * one computation per `ttlMs` whatever the number of viewers, concurrent callers join the
 * one in flight, and a failure is not remembered.
 */
interface Entry<T> {
  at: number;
  value?: T;
  inFlight?: Promise<T>;
}

const g = globalThis as unknown as { __leaseholdMemo?: Map<string, Entry<unknown>> };

export async function memo<T>(key: string, ttlMs: number, compute: () => Promise<T>): Promise<T> {
  g.__leaseholdMemo ??= new Map();
  const cache = g.__leaseholdMemo as Map<string, Entry<T>>;
  const e = cache.get(key);
  if (e?.value !== undefined && Date.now() - e.at < ttlMs) return e.value;
  if (e?.inFlight) return e.inFlight;
  const inFlight = compute().then(
    (value) => {
      cache.set(key, { at: Date.now(), value });
      return value;
    },
    (err) => {
      cache.delete(key);
      throw err;
    },
  );
  cache.set(key, { ...(e ?? { at: 0 }), inFlight });
  return inFlight;
}

/** Forget memoised values (after an action changed what they show). */
export function forget(prefix: string) {
  for (const k of g.__leaseholdMemo?.keys() ?? []) if (k.startsWith(prefix)) g.__leaseholdMemo!.delete(k);
}
