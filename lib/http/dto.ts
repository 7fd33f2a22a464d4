/** JSON shapes of the HTTP API (ids as strings, ISO dates, camelCase). */
import type { Config } from '../config';
import type { DeadLetter } from '../queue/dead-letter';
import type { ActionItem, ActionReport, QueueControl, RecoverReport, Schedule } from '../queue/ops';
import { toJobDto } from '../queue/job';
import type { History } from '../queue/history';
import type { StatsSnapshot } from '../queue/stats-cache';
import { type Attempt, type JobDetail, type JobPage, LIST_PAYLOAD_MAX_BYTES, type ListedJob, type Stats, type WorkerRow } from '../queue/read';
import { mayDeleteView, type SavedView } from '../views/store';
import type { Principal } from '../auth/roles';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const listedJobDto = (j: ListedJob) => ({
  ...toJobDto(j),
  leaseRemainingMs: j.leaseRemainingMs,
  ownerGone: j.ownerGone,
  payloadBytes: j.payloadBytes,
  /** True when the payload was too big for a list (open the job for it). */
  payloadOmitted: j.payload === null && j.payloadBytes > LIST_PAYLOAD_MAX_BYTES,
});

export const pageDto = (p: JobPage) => ({
  jobs: p.jobs.map(listedJobDto),
  nextCursor: p.nextCursor,
  dbNow: p.dbNow.toISOString(),
  headId: p.headId,
  newerAfter: p.newerAfter,
  partial: p.partial,
});

export const lookupDto = (r: { jobs: ListedJob[]; dbNow: Date }) => ({
  jobs: r.jobs.map(listedJobDto),
  dbNow: r.dbNow.toISOString(),
});

export const attemptDto = (a: Attempt) => ({
  attempt: a.attempt,
  workerId: a.workerId,
  startedAt: a.startedAt.toISOString(),
  heartbeatAt: iso(a.heartbeatAt),
  finishedAt: iso(a.finishedAt),
  outcome: a.outcome,
  error: a.error,
  errorStack: a.errorStack,
});

export const detailDto = (d: JobDetail) => ({
  job: { ...toJobDto(d.job), leaseRemainingMs: d.leaseRemainingMs, ownerGone: d.ownerGone },
  payloadText: d.payloadText,
  /** True when the payload was left out on request (payload=0): job.payload and payloadText are null. */
  ...(d.payloadText === null ? { payloadOmitted: true as const } : {}),
  attempts: d.attempts.map(attemptDto),
  dbNow: d.dbNow.toISOString(),
  ...(d.singletonHolder ? { singletonHolder: d.singletonHolder } : {}),
  ...(d.workers ? { workers: d.workers } : {}),
  ...(d.ahead ? { ahead: d.ahead } : {}),
});

export const actionItemDto = (i: ActionItem) => ({
  id: i.id,
  ok: i.ok,
  outcome: i.outcome,
  ...(i.reason ? { reason: i.reason } : {}),
  ...(i.job ? { job: toJobDto(i.job) } : {}),
});

export const actionReportDto = (r: ActionReport) => ({
  changed: r.changed,
  skipped: r.skipped,
  items: r.items.map(actionItemDto),
});

export const recoverDto = (r: RecoverReport) => r;

export const statsDto = (s: Stats) => ({ ...s, dbNow: s.dbNow.toISOString() });

export const queueControlDto = (c: QueueControl) => ({ ...c, pausedAt: iso(c.pausedAt) });

/** The answer to a change of a queue's controls (POST /api/queues/:name, the CLI's --json): null controls, none are set. */
export const queueControlsChangeDto = (queue: string, c: QueueControl | null, changed: boolean) => ({ queue, controls: c ? queueControlDto(c) : null, changed });

export const scheduleDto = (s: Schedule) => ({ ...s, nextRunAt: s.nextRunAt.toISOString(), lastRunAt: iso(s.lastRunAt), lastErrorAt: iso(s.lastErrorAt), pausedAt: iso(s.pausedAt), lastSkippedAt: iso(s.lastSkippedAt) });

export const historyDto = (h: History) => ({ ...h, since: iso(h.since), until: iso(h.until) });

export const statsSnapshotDto = (s: StatsSnapshot) => ({
  ...s,
  queues: s.queues.map((q) => ({ ...q, controls: q.controls ? queueControlDto(q.controls) : null })),
  computedAt: s.computedAt.toISOString(),
  dbNow: s.dbNow.toISOString(),
  estimates: { ...s.estimates, analyzedAt: iso(s.estimates.analyzedAt) },
  throughput: { ...s.throughput, since: iso(s.throughput.since) },
  types: { ...s.types, since: iso(s.types.since), until: iso(s.types.until) },
});

export const workerDto = (w: WorkerRow) => ({
  ...w,
  startedAt: w.startedAt.toISOString(),
  heartbeatAt: w.heartbeatAt.toISOString(),
  stoppedAt: iso(w.stoppedAt),
  quietAt: iso(w.quietAt),
});

export const workersDto = (workers: WorkerRow[], total: number, staleAfterMs: number, dbNow: Date) => ({
  workers: workers.map(workerDto),
  total,
  staleAfterMs,
  dbNow: dbNow.toISOString(),
});

export const deadLetterDto = (d: DeadLetter) => ({
  ...d,
  groups: d.groups.map((g) => ({ ...g, newestFailedAt: iso(g.newestFailedAt), oldestFailedAt: iso(g.oldestFailedAt) })),
  dbNow: d.dbNow.toISOString(),
});

/** What the console shows about its own installation (GET /api/console). */
export const consoleInfoDto = (
  cfg: Pick<Config, 'leaseMs' | 'heartbeatMs' | 'recoverMs' | 'redisPrefix' | 'logUrl'>,
  o: { environment: string | null; redis: boolean; version: string; jobTypes: string[] },
) => ({
  environment: o.environment,
  leaseMs: cfg.leaseMs,
  heartbeatMs: cfg.heartbeatMs,
  recoverMs: cfg.recoverMs,
  redis: o.redis,
  redisPrefix: cfg.redisPrefix,
  version: o.version,
  jobTypes: o.jobTypes,
  logUrl: cfg.logUrl,
});

/** A saved view as the caller sees it: whether they may delete it is theirs (its creator, or an admin). */
export const savedViewDto = (v: SavedView, who: Principal) => ({
  id: v.id,
  name: v.name,
  page: v.page,
  query: v.query,
  // A token's view names the token as such: a token and a user may share a name.
  createdBy: v.createdBy?.name ?? (v.createdByToken ? `${v.createdByToken.name} (API token)` : null),
  createdAt: v.createdAt.toISOString(),
  deletable: mayDeleteView(v, who),
});
