import { queryOptions } from '@tanstack/react-query';
import { api } from './client';
import { dbNowMs } from './clock';
import { scheduleKeys } from './keys';
import type { ScheduleDto, SchedulesDto } from './types';

export const schedulesQuery = (refetchMs: number | false) =>
  queryOptions({
    queryKey: scheduleKeys.all,
    queryFn: ({ signal }) => api<SchedulesDto>('/api/schedules', { signal, clock: true }),
    refetchInterval: refetchMs,
  });

/**
 * What a run-now made (POST /api/schedules/:name/run): created false when a run-now a moment
 * before made it, or (overlapping) when it is the schedule's run still unfinished.
 */
export interface ScheduleRunDto {
  schedule: string;
  id: string;
  queue: string;
  created: boolean;
  overlapping?: true;
}

const schedulePath = (name: string, verb: 'run' | 'pause' | 'resume') => `/api/schedules/${encodeURIComponent(name)}/${verb}`;
const withReason = (reason?: string) => (reason ? { reason } : {});

export const runScheduleNow = (name: string, reason?: string) => api<ScheduleRunDto>(schedulePath(name, 'run'), { method: 'POST', json: withReason(reason) });

export const setSchedulePaused = (name: string, paused: boolean, reason?: string) =>
  api<{ schedule: ScheduleDto; changed: boolean }>(schedulePath(name, paused ? 'pause' : 'resume'), { method: 'POST', json: withReason(reason) });

/** A recurring job's definition as PUT /api/schedules/:name takes it. */
export interface ScheduleDefinition {
  cron: string;
  timezone?: string;
  type: string;
  payload?: unknown;
  queue?: string;
  maxAttempts?: number;
  priority?: number;
  /** 'skip': no tick while a run of it is unfinished. */
  overlap?: ScheduleDto['overlap'];
  reason?: string;
}

/** `onlyNew`: a new schedule, refused (409) when the name is taken rather than replacing that one. */
export const defineSchedule = (name: string, definition: ScheduleDefinition, onlyNew = false) =>
  api<{ schedule: ScheduleDto }>(`/api/schedules/${encodeURIComponent(name)}`, { method: 'PUT', json: definition, headers: onlyNew ? { 'if-none-match': '*' } : {} });

export const removeSchedule = (name: string, reason?: string) =>
  api<{ removed: string }>(`/api/schedules/${encodeURIComponent(name)}`, { method: 'DELETE', json: withReason(reason) });

/** The next ticks of an expression as a schedule of that name would run them (GET /api/cron), with the zone they were asked in. */
export interface CronTicksDto {
  ticks: string[];
  dbNow: string;
  timezone: string;
}

export const cronTicksQuery = (cron: string, timezone: string, name: string) =>
  queryOptions({
    queryKey: [...scheduleKeys.all, 'ticks', cron, timezone, name] as const,
    queryFn: async ({ signal }) => ({
      ...(await api<Omit<CronTicksDto, 'timezone'>>(`/api/cron?${new URLSearchParams({ cron, timezone, count: '3', ...(name ? { name } : {}) })}`, { signal, clock: true })),
      timezone,
    }),
    // Asked again once the first tick has passed on the database's clock (a dialog left open),
    // not before: the ticks of an expression only change as the clock passes them, and the
    // countdown under them counts on that clock (a browser minutes slow kept a passed tick).
    staleTime: Infinity,
    refetchInterval: (q) => {
      const first = q.state.data?.ticks[0];
      return first ? Math.max(1_000, Date.parse(first) - dbNowMs() + 500) : false;
    },
    retry: false,
  });
