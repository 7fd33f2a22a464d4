/**
 * The JSON shapes the console reads, derived from the server's DTO functions (type-only
 * imports: nothing of the server is bundled into the browser).
 */
import type { detailDto, historyDto, listedJobDto, pageDto, savedViewDto, scheduleDto, statsSnapshotDto, workerDto } from '../http/dto';
import type { BulkAction, BulkItem, BulkReport } from '../queue/bulk';
import type { CountKind } from '../queue/console-stats';
import type { DeadLetterGroup } from '../queue/dead-letter';

export type { JobStatus } from './statuses';
export type { BulkAction, BulkItem, CountKind };

type Jsonify<T> = T extends Date ? string : T extends (infer U)[] ? Jsonify<U>[] : T extends object ? { [K in keyof T]: Jsonify<T[K]> } : T;

export type JobRow = ReturnType<typeof listedJobDto>;
export type JobPageDto = ReturnType<typeof pageDto>;
export type JobDetailDto = ReturnType<typeof detailDto>;
export type AttemptDto = JobDetailDto['attempts'][number];
export type StatsDto = ReturnType<typeof statsSnapshotDto>;
export type StatsHistoryDto = ReturnType<typeof historyDto>;
export type QueueStatsDto = StatsDto['queues'][number];
export type RatePointDto = StatsDto['throughput']['points'][number];
export type WorkerDto = ReturnType<typeof workerDto>;
export type WorkersDto = { workers: WorkerDto[]; total: number; staleAfterMs: number; dbNow: string };
export type ScheduleDto = Jsonify<ReturnType<typeof scheduleDto>>;
export type SchedulesDto = { schedules: ScheduleDto[]; dbNow: string };
export type SavedViewDto = ReturnType<typeof savedViewDto>;
export type BulkReportDto = Jsonify<BulkReport>;
export type DeadLetterGroupDto = Jsonify<DeadLetterGroup>;
export type DeadLetterDto = { groups: DeadLetterGroupDto[]; examined: number; complete: boolean; dbNow: string };
export type ConsoleMeta = {
  environment: string | null;
  leaseMs: number;
  heartbeatMs: number;
  recoverMs: number;
  redis: boolean;
  redisPrefix: string;
  version: string | null;
  /** Built in, and registered by workers (the type filter suggests them). */
  jobTypes: string[];
  /** LEASEHOLD_LOG_URL: an attempt's logs (lib/log-links.ts); null without. */
  logUrl: string | null;
};
