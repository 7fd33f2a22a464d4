/** Operator actions: preview, then apply, through POST /api/actions/:action. */
import { api } from './client';
import type { JobFilters } from './filters';
import type { JobStatus } from '../queue/status';
import type { BulkAction, BulkReportDto } from './types';

/** `seen` with ids: each job as the preview showed it (the action skips one that changed since). */
export type ActionTarget =
  | { ids: string[]; seen?: Record<string, { status: JobStatus; attempt: number }> }
  | { filter: JobFilters & { maxId?: string; finishedBy?: string } }
  | { all: true };

export interface ActionOptions {
  resetAttempts?: boolean;
  revokeLease?: boolean;
}

export const runAction = (action: BulkAction, target: ActionTarget, opts: ActionOptions & { preview: boolean; expectIds?: string[]; reason?: string }) =>
  api<BulkReportDto>(`/api/actions/${action}`, { method: 'POST', json: { ...target, ...opts } });
