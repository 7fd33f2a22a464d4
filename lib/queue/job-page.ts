/**
 * A job as its page says it (GET /api/jobs/:id, `leasehold show`): the row and its attempts,
 * and for a job not finished who could run it or would recover it, and for a due waiting one
 * how many jobs claims take before it.
 */
import type { Executor } from '../db/client';
import { sweepStaleAfterMs } from './console-stats';
import { isDueWaiting } from './job';
import { jobsAhead, queueWorkersForType } from './ops';
import { getJob, type JobDetail } from './read';

export async function getJobPage(db: Executor, id: string, o: { leaseMs: number; recoverMs: number; payload?: boolean }): Promise<JobDetail | null> {
  const detail = await getJob(db, id, { payload: o.payload });
  if (!detail) return null;
  const { queue, type, status } = detail.job;
  // A waiting job's page says who could run it, a running one's who would recover it (and
  // whether their sweep has stopped, as the overview judges it); a worker counts as live
  // within a lease of its last report, as on the workers page.
  // A due waiting one's page also says how many jobs claims take before it (by priority,
  // then due time): why a job of priority 5 still waits behind a busy level 0.
  if (status === 'queued' || status === 'retrying' || status === 'running') {
    const [workers, ahead] = await Promise.all([
      queueWorkersForType(db, { queue, type, aliveWithinMs: o.leaseMs }),
      isDueWaiting(detail.job, detail.dbNow) ? jobsAhead(db, detail.job, { aliveWithinMs: o.leaseMs }) : null,
    ]);
    detail.workers = { ...workers, sweepStaleAfterMs: sweepStaleAfterMs(o.recoverMs) };
    if (ahead) detail.ahead = ahead;
  }
  return detail;
}
