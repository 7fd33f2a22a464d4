'use client';
/**
 * Whether the console server is answering, as the page's own queries found it: the header's
 * refresh control says "Live" only while it is. A failed refresh already shows where its data
 * is (a list says its rows are as last read); this is the one place that says the whole page
 * has stopped following — the server down or failing — and since when it last heard from it.
 */
import { type Query, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ApiError } from './client';

/** An error that says the server did not answer, or failed (not a 404 or a refusal). */
const unreachable = (e: unknown) => e instanceof ApiError && (e.status === 0 || e.status >= 500);

/** No answer for this long after a failure before the header says so: a blip is not an outage. */
export const TROUBLE_AFTER_MS = 5_000;

/**
 * From the queries a page is watching: null while the latest thing heard is an answer (or
 * one came within TROUBLE_AFTER_MS: a single query failing beside others that answer, a
 * failure its retry may still mend), else when the last answer came (ms since the epoch;
 * null if none ever did).
 */
export function connectionTrouble(queries: readonly Pick<Query, 'state' | 'getObserversCount'>[], now = Date.now()): { lastAnswerAt: number | null } | null {
  let lastAnswer = 0;
  let lastFailure = 0;
  for (const q of queries) {
    if (q.getObserversCount() === 0) continue;
    lastAnswer = Math.max(lastAnswer, q.state.dataUpdatedAt - snapshotAgeMs(q.state.data));
    if (q.state.status === 'error' && unreachable(q.state.error)) lastFailure = Math.max(lastFailure, q.state.errorUpdatedAt);
  }
  return lastFailure > lastAnswer && now - lastAnswer >= TROUBLE_AFTER_MS ? { lastAnswerAt: lastAnswer || null } : null;
}

/**
 * How old the data of an answer was when it was sent, when the server says it serves it on
 * because it could not refresh it: the stats snapshot (`refreshFailing`; `computedAt`, and
 * `dbNow`, the database's time at the answer) while the database is away, whose delivery is
 * no sign that the server is following it. 0 for the rest (a snapshot served stale while a
 * refresh runs, as after a quiet spell, is an answer like any other).
 */
function snapshotAgeMs(data: unknown): number {
  const d = data as { computedAt?: unknown; dbNow?: unknown; refreshFailing?: unknown } | null | undefined;
  if (d?.refreshFailing !== true || typeof d.computedAt !== 'string' || typeof d.dbNow !== 'string') return 0;
  const age = Date.parse(d.dbNow) - Date.parse(d.computedAt);
  return Number.isFinite(age) && age > 0 ? age : 0;
}

/** connectionTrouble of this page's queries, kept current (and `now`, ticking while in trouble). */
export function useConnectionTrouble(): { lastAnswerAt: number | null; now: number } | null {
  const qc = useQueryClient();
  const [trouble, setTrouble] = useState<{ lastAnswerAt: number | null } | null>(null);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const cache = qc.getQueryCache();
    const check = () =>
      setTrouble((prev) => {
        const next = connectionTrouble(cache.getAll());
        return prev?.lastAnswerAt === next?.lastAnswerAt && !prev === !next ? prev : next;
      });
    check();
    // Also each second: failing polls may come less often than TROUBLE_AFTER_MS passes.
    const t = setInterval(check, 1_000);
    const unsubscribe = cache.subscribe(check);
    return () => {
      clearInterval(t);
      unsubscribe();
    };
  }, [qc]);
  useEffect(() => {
    if (!trouble) return;
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(t);
  }, [trouble]);
  return trouble ? { ...trouble, now } : null;
}
