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
 * A poll still waiting for its answer after this long (or two of its intervals, if longer),
 * with no reply of any kind to any query for this long, is trouble too: a server that hangs
 * (stopped, a proxy that holds the request, an event loop that does not turn) never fails a
 * request, and the page's countdowns would otherwise run on, on its last reading, under "Live".
 * Well above the console's slowest healthy read (its statements stop at 5 s, the client side
 * at 10: lib/server/context.ts). Only polls count: a one-off read (an action's preview, the
 * week's history) may be slow on its own.
 */
export const HANGING_AFTER_MS = 15_000;

/** What connectionTrouble reports: when the last answer came, and whether a refresh hangs (rather than failed). */
export interface ConnectionTrouble {
  lastAnswerAt: number | null;
  hanging?: true;
}

type Watched = Pick<Query, 'state' | 'getObserversCount'>;

/**
 * From the queries a page is watching: null while the latest thing heard is an answer (or
 * one came within TROUBLE_AFTER_MS: a single query failing beside others that answer, a
 * failure its retry may still mend), else when the last answer came (ms since the epoch;
 * null if none ever did). `fetchingSince` tells when a query's refresh under way was first
 * seen and `pollEvery` how often it polls (undefined: it does not), as useConnectionTrouble
 * keeps them: no reply to any query for HANGING_AFTER_MS (or two of a poll's intervals), and a
 * poll waiting for TROUBLE_AFTER_MS (or two intervals) of it, is a server that hangs. Counted
 * from the last reply, not from the poll's start: a live stream that went quiet is given up
 * (lib/api/live.ts) only after two intervals and 5 s, and its polls start then; counted from
 * their start, "Live" stayed up 24 s after the server stopped.
 */
export function connectionTrouble(
  queries: readonly Watched[],
  now = Date.now(),
  fetchingSince: (q: Watched) => number | undefined = () => undefined,
  pollEvery: (q: Watched) => number | undefined = () => undefined,
): ConnectionTrouble | null {
  let lastAnswer = 0;
  let lastFailure = 0;
  let lastReply = 0;
  // How long without any reply the polls under way may wait (Infinity: none is waiting yet).
  let patience = Infinity;
  for (const q of queries) {
    if (q.getObserversCount() === 0) continue;
    lastAnswer = Math.max(lastAnswer, q.state.dataUpdatedAt - snapshotAgeMs(q.state.data));
    // Any reply, a failure or a stale snapshot too, says the console server itself answers.
    lastReply = Math.max(lastReply, q.state.dataUpdatedAt, q.state.errorUpdatedAt);
    if (q.state.status === 'error' && unreachable(q.state.error)) lastFailure = Math.max(lastFailure, q.state.errorUpdatedAt);
    const since = q.state.fetchStatus === 'fetching' ? fetchingSince(q) : undefined;
    const every = pollEvery(q);
    if (since !== undefined && every !== undefined && now - since >= Math.max(TROUBLE_AFTER_MS, 2 * every)) patience = Math.min(patience, Math.max(HANGING_AFTER_MS, 2 * every));
  }
  if (lastFailure > lastAnswer && now - lastAnswer >= TROUBLE_AFTER_MS) return { lastAnswerAt: lastAnswer || null };
  if (now - lastReply >= patience) return { lastAnswerAt: lastAnswer || null, hanging: true };
  return null;
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

/**
 * How often a query polls: the shortest refetchInterval of its observers, a fixed one or what
 * one given as a function answers now (the stats': statsRefetchMs); undefined: none polls.
 */
export function pollEvery(q: Watched): number | undefined {
  let every: number | undefined;
  for (const o of (q as Query).observers ?? []) {
    const option = o.options.refetchInterval;
    const i = typeof option === 'function' ? option(q as Query) : option;
    if (typeof i === 'number' && i > 0) every = Math.min(every ?? i, i);
  }
  return every;
}

/** connectionTrouble of this page's queries, kept current (and `now`, ticking while in trouble). */
export function useConnectionTrouble(): (ConnectionTrouble & { now: number }) | null {
  const qc = useQueryClient();
  const [trouble, setTrouble] = useState<ConnectionTrouble | null>(null);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const cache = qc.getQueryCache();
    // When each refresh under way was first seen (the cache tells of a fetch's start, and this
    // also looks each second): TanStack Query keeps no start time of its own.
    const since = new WeakMap<object, number>();
    const check = () => {
      const at = Date.now();
      const queries = cache.getAll();
      for (const q of queries) {
        if (q.state.fetchStatus !== 'fetching') since.delete(q);
        else if (!since.has(q)) since.set(q, at);
      }
      setTrouble((prev) => {
        const next = connectionTrouble(queries, at, (q) => since.get(q), pollEvery);
        return prev?.lastAnswerAt === next?.lastAnswerAt && prev?.hanging === next?.hanging && !prev === !next ? prev : next;
      });
    };
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
