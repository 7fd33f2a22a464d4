/** JSON shapes of the HTTP API (ids as strings, ISO dates, camelCase). */
import type { ActionItem, ActionReport, RecoverReport } from '../queue/ops';
import { toJobDto } from '../queue/job';
import type { Attempt, JobDetail, JobPage, Stats, WorkerRow } from '../queue/read';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const pageDto = (p: JobPage) => ({
  jobs: p.jobs.map((j) => ({ ...toJobDto(j), leaseRemainingMs: j.leaseRemainingMs })),
  nextCursor: p.nextCursor,
  dbNow: p.dbNow.toISOString(),
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
  job: { ...toJobDto(d.job), leaseRemainingMs: d.leaseRemainingMs },
  attempts: d.attempts.map(attemptDto),
  dbNow: d.dbNow.toISOString(),
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

export const workerDto = (w: WorkerRow) => ({
  ...w,
  startedAt: w.startedAt.toISOString(),
  heartbeatAt: w.heartbeatAt.toISOString(),
  stoppedAt: iso(w.stoppedAt),
});
