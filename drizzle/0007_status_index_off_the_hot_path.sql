-- The status index gained an entry on every claim and every completion (status changes, so
-- those updates are never HOT). Running and completed rows are now left out: the hot path
-- writes two index entries fewer per job. Running jobs are listed from jobs_running_idx,
-- completed ones from the primary key (they are the bulk of the table, newest first).
DROP INDEX IF EXISTS "jobs_status_idx";--> statement-breakpoint
CREATE INDEX "jobs_status_idx" ON "jobs" USING btree ("status","job_id") WHERE status NOT IN ('running', 'completed');