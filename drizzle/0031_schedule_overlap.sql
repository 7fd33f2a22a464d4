-- A schedule's overlap policy: 'allow' (the default, as before) enqueues every tick; 'skip'
-- gives its jobs the singleton key `schedule:<name>`, so a tick (or a Run now) while a run of it
-- is still queued, retrying or running makes no second job: the tick is skipped, and when it
-- was, and the job that was unfinished, are kept in last_skipped_at and last_skipped_job_id.
-- Constant defaults: no rewrite of the table.
ALTER TABLE "schedules" ADD COLUMN "overlap" text DEFAULT 'allow' NOT NULL;--> statement-breakpoint
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_overlap_known" CHECK (overlap IN ('allow', 'skip'));--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "last_skipped_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "last_skipped_job_id" bigint;
