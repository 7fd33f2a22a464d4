/**
 * The reads the console repeats every refresh: the overview's numbers, the rows on a jobs
 * page and its "N new" count. The polling routes (/api/stats, /api/jobs/lookup,
 * /api/jobs/newer) and the live feed (/api/live) answer from these same functions, so a
 * viewer sees the same thing whichever way it asks, and every read is shared by all
 * viewers of this process (the stats cache, the read cache).
 */
import { lookupDto, statsSnapshotDto } from '../http/dto';
import type { JobFilter } from '../queue/filters';
import { agedBy, countNewer, jobsByIds } from '../queue/read';
import { serverContext } from './context';
import { readCache } from './read-cache';

export const readStats = async () => statsSnapshotDto(await serverContext().stats.get());

export async function readLookup(ids: readonly string[]) {
  // The same set in any order is one read (the rows come back newest first whatever the order).
  const key = [...new Set(ids)].sort().join(',');
  const { value, ageMs } = await readCache.get(`lookup ${key}`, () => jobsByIds(serverContext().readPool, ids));
  // The rows carry the database clock and the leases left: moved on by the answer's age.
  return lookupDto(agedBy(value, ageMs));
}

export async function readNewer(after: string, filter: JobFilter) {
  const { value } = await readCache.get(`newer ${after} ${JSON.stringify(filter)}`, () => countNewer(serverContext().readPool, filter, after));
  return value;
}
