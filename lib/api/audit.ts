/** The audit log, as the console reads it (GET /api/audit). */
import { queryOptions } from '@tanstack/react-query';
import { api } from './client';

export interface AuditEntryDto {
  id: string;
  at: string;
  actor: string;
  actorKind: string;
  action: string;
  target: Record<string, unknown>;
  jobIds: string[];
  changed: number;
  skipped: number;
  reason: string | null;
  details: Record<string, unknown>;
  state: 'started' | 'done' | 'failed';
}

export interface AuditPageDto {
  entries: AuditEntryDto[];
  nextCursor: string | null;
}

export interface AuditFilters {
  actor?: string;
  action?: string;
  jobId?: string;
  cursor?: string;
}

export const auditQuery = (f: AuditFilters, refetchInterval: number | false = false) =>
  queryOptions({
    queryKey: ['audit', f] as const,
    queryFn: ({ signal }) => {
      const qs = new URLSearchParams(Object.entries(f).filter(([, v]) => v) as [string, string][]);
      return api<AuditPageDto>(`/api/audit?${qs}`, { signal });
    },
    refetchInterval,
  });
