/**
 * The reads the console repeats every refresh: the overview's numbers, the rows on a jobs
 * page and its "N new" count, a job's page, the workers. The polling routes (/api/stats,
 * /api/jobs/lookup, /api/jobs/newer, /api/jobs/:id, /api/audit, /api/workers) and the live
 * feed (/api/live) answer from these same functions, so a viewer sees the same thing
 * whichever way it asks; the lists' reads are shared by all viewers of this process (the
 * stats cache, the read cache).
 */
import { type AuditQuery, auditList } from '../audit/log';
import type { Principal } from '../auth/roles';
import { detailDto, historyDto, lookupDto, statsSnapshotDto, workersDto } from '../http/dto';
import { type HistoryRange, readHistory } from '../queue/history';
import { type Redaction, redactFilter, redactionFor, redactJob, redactJobs, redactJsonText, redactViewQuery } from '../http/redact';
import { QueueError } from '../queue/errors';
import type { JobFilter } from '../queue/filters';
import { getJobPage } from '../queue/job-page';
import { agedBy, countNewer, countWorkers, dbNow, jobsByIds, listWorkers, WORKERS_LISTED } from '../queue/read';
import { serverContext } from './context';
import { readCache } from './read-cache';

/** What this reader may not see of payloads (LEASEHOLD_REDACT_KEYS; null: everything). */
export const redactionOf = (who: Principal): Redaction => redactionFor(who, serverContext().cfg.redactKeys);

export const readStats = async () => statsSnapshotDto(await serverContext().stats.get());

/** How long a range of the stats record is shared by every viewer: it gains a sample a minute. */
export const HISTORY_CACHE_MS = 30_000;

/** The stats record over a range (GET /api/stats/history), read once per half minute for every viewer. */
export async function readStatsHistory(range: HistoryRange) {
  const { value } = await readCache.get(`history ${range}`, () => readHistory(serverContext().readPool, range), { ttlMs: HISTORY_CACHE_MS });
  return historyDto(value);
}

export async function readLookup(ids: readonly string[], redaction: Redaction) {
  // The same set in any order is one read (the rows come back newest first whatever the order).
  const key = [...new Set(ids)].sort().join(',');
  const { value, ageMs } = await readCache.get(`lookup ${key}`, () => jobsByIds(serverContext().readPool, ids));
  // The rows carry the database clock and the leases left: moved on by the answer's age.
  const dto = lookupDto(agedBy(value, ageMs));
  return { ...dto, jobs: redactJobs(dto.jobs, redaction) };
}

export async function readNewer(after: string, filter: JobFilter) {
  const { value } = await readCache.get(`newer ${after} ${JSON.stringify(filter)}`, () => countNewer(serverContext().readPool, filter, after));
  return value;
}

/** A job with its attempts, the running one included (GET /api/jobs/:id); not_found when there is none. */
export async function readJob(id: string, opts: { payload?: boolean }, redaction: Redaction) {
  const { readPool, cfg } = serverContext();
  const detail = await getJobPage(readPool, id, { leaseMs: cfg.leaseMs, recoverMs: cfg.recoverMs, payload: opts.payload });
  if (!detail) throw new QueueError('not_found', `no job with id ${id}`);
  const dto = detailDto(detail);
  if (!redaction) return dto;
  return { ...dto, job: redactJob(dto.job, redaction), payloadText: dto.payloadText === null ? null : redactJsonText(dto.payloadText, redaction) };
}

/** Operator actions, newest first, one keyset page (GET /api/audit; a job's page asks for its own). */
export async function readAudit(q: AuditQuery, redaction: Redaction) {
  const page = await auditList(serverContext().readPool, q);
  return {
    entries: page.entries.map((e) => ({ ...e, target: redactTarget(e.target, redaction), details: redactDetails(e.details, redaction), at: e.at.toISOString() })),
    nextCursor: page.nextCursor,
  };
}

/** Worker process incarnations, live ones first; stale past a lease without a report (GET /api/workers). */
export async function readWorkers() {
  const { readPool, cfg } = serverContext();
  // Shared by every workers page open on this console (and the live feed's topic), one read a
  // second, as the other reads: each page's own read sorted the week's worker rows.
  const { value, ageMs } = await readCache.get('workers', async () => {
    const [workers, now] = await Promise.all([listWorkers(readPool, { staleAfterMs: cfg.leaseMs }), dbNow(readPool)]);
    // A full list leaves rows out: how many there are is said beside it, not left to guess (a
    // second statement: rows folded away between the two never make it fewer than are listed).
    const total = workers.length < WORKERS_LISTED ? workers.length : Math.max(workers.length, await countWorkers(readPool));
    return { workers, now, total };
  });
  // The heartbeats' ages and the clock, moved on by the answer's age.
  const workers = ageMs > 0 ? value.workers.map((w) => ({ ...w, heartbeatAgeMs: w.heartbeatAgeMs + ageMs })) : value.workers;
  return workersDto(workers, value.total, cfg.leaseMs, new Date(value.now.getTime() + ageMs));
}

/** An audit entry's details, for this reader: a saved view's query (view.save, view.delete) as GET /api/views shows it. */
function redactDetails(details: Record<string, unknown>, redaction: Redaction): Record<string, unknown> {
  if (!redaction || typeof details.query !== 'string') return details;
  return { ...details, query: redactViewQuery(details.query, redaction) };
}

/** An audit entry's target, for this reader: a bulk action's payload filter on a hidden key keeps its key, not the value tested. */
function redactTarget<T>(target: T, redaction: Redaction): T {
  const filter = (target as { filter?: unknown } | null)?.filter;
  if (!redaction || !filter || typeof filter !== 'object') return target;
  return { ...target, filter: redactFilter(filter as { payload?: unknown }, redaction) };
}
