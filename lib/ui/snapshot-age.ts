/**
 * When to read the stats again after an answer (no imports: the live feed's route uses it on
 * the server, the pages' queries in the browser).
 */

/** How soon a page asks again for stats that were served old (statsRefetchMs). */
export const OLD_SNAPSHOT_REASK_MS = 1_000;

/**
 * When to ask for the stats again: every `refetchMs`, but within a second while the last
 * answer was an old snapshot — three refresh intervals old or more when served (dbNow −
 * computedAt, both the database's clock), which the server gives the first viewer after a
 * quiet spell while it reads a fresh one (lib/queue/stats-cache.ts). A page polling every
 * 15 s (the jobs list, the schedules) showed that old one, and what it implied — no worker
 * alive, for a console started before its workers — for a whole poll. The live feed's
 * stats event follows the same rule (app/api/live/route.ts).
 */
export function statsRefetchMs(refetchMs: number | false, last: { dbNow: string | Date; computedAt: string | Date; refreshMs: number } | undefined): number | false {
  if (refetchMs === false || !last) return refetchMs;
  // As answered (ISO text) or as read on the server (Dates: the live feed, lib/server/live.ts).
  const servedAgeMs = new Date(last.dbNow).getTime() - new Date(last.computedAt).getTime();
  return servedAgeMs >= 3 * last.refreshMs ? Math.min(refetchMs, OLD_SNAPSHOT_REASK_MS) : refetchMs;
}
