/**
 * What quieting a worker would leave without a consumer: its queues that no other live
 * worker claims from (not ended, not silent for longer than a lease, not quiet itself). The
 * Quiet dialog says so, since those queues' jobs then wait until it is resumed or another
 * worker starts: a quiet meant for one host's maintenance can stop a queue everywhere.
 */
import type { WorkerDto } from '../api/types';

type W = Pick<WorkerDto, 'workerId' | 'queues' | 'stoppedAt' | 'stale' | 'quietAt'>;

export function queuesOnlyServedBy(workers: readonly W[], workerId: string): string[] {
  const me = workers.find((w) => w.workerId === workerId);
  if (!me) return [];
  const others = new Set(workers.filter((w) => w.workerId !== workerId && w.stoppedAt === null && !w.stale && w.quietAt === null).flatMap((w) => w.queues));
  return me.queues.filter((q) => !others.has(q));
}
