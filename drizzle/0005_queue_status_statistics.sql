-- The console's per-queue counts without counting: extended statistics on (queue, status)
-- give ANALYZE's joint frequencies of each queue and status (pg_stats_ext), which the
-- overview multiplies by the live row count when a status is too large to count on every
-- refresh (lib/queue/console-stats.ts). They also give the planner real estimates for
-- `queue = … AND status = …`. No cost on inserts or updates (no index): only ANALYZE
-- samples a little more. Statistics target 1000: room for (queue, status) pairs of many queues.
CREATE STATISTICS IF NOT EXISTS "jobs_queue_status_stats" (mcv) ON "queue", "status" FROM "jobs";--> statement-breakpoint
ALTER STATISTICS "jobs_queue_status_stats" SET STATISTICS 1000;
