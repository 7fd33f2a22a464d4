/** Operator actions: preview, then apply, through POST /api/actions/:action. */
import { api } from './client';
import type { JobFilters } from './filters';
import type { BulkAction, BulkReportDto } from './types';

export type ActionTarget = { ids: string[] } | { filter: JobFilters & { maxId?: string; finishedBy?: string } } | { all: true };

export interface ActionOptions {
  resetAttempts?: boolean;
  revokeLease?: boolean;
}

export const runAction = (action: BulkAction, target: ActionTarget, opts: ActionOptions & { preview: boolean; expectIds?: string[]; reason?: string }) =>
  api<BulkReportDto>(`/api/actions/${action}`, { method: 'POST', json: { ...target, ...opts } });
