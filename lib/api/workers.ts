import { queryOptions } from '@tanstack/react-query';
import { api } from './client';
import { workerKeys } from './keys';
import type { WorkersDto } from './types';

/** Quiet (or resume) one worker process: it claims no new job, read with its next heartbeat. */
export const setWorkerQuiet = (workerId: string, quiet: boolean, reason?: string) =>
  api<{ workerId: string; quiet: boolean; changed: boolean }>(`/api/workers/${encodeURIComponent(workerId)}/${quiet ? 'quiet' : 'resume'}`, {
    method: 'POST',
    json: reason ? { reason } : {},
  });

export const workersQuery = (refetchMs: number | false) =>
  queryOptions({
    queryKey: workerKeys.all,
    queryFn: ({ signal }) => api<WorkersDto>('/api/workers', { signal, clock: true }),
    refetchInterval: refetchMs,
  });
