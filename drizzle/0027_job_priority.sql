-- Per-job priority, as Oban, River and BullMQ have it: 0 (the default) runs first, 9 last;
-- within a level, the oldest due job first. A constant default adds the column without
-- rewriting the table.
--
-- The claim indexes lead with the priority after the queue (and type), so a claim reads each
-- level's due jobs in order. A claim walks the ten levels one index range each: with the
-- priority ahead of run_at, one range over all levels would read past every not-yet-due job
-- of a level before reaching the next one. Each rebuild reads the table once while this
-- migration holds its lock (the README's Priority section has the figure per million rows),
-- and processes of an earlier version read the new indexes badly: upgrade every worker
-- together rather than one by one.
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "priority" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- NOT VALID: every row there is has the default, and checking them all would read the table
-- while this migration holds its lock; rows written from now on are checked all the same.
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_priority_in_range" CHECK (priority BETWEEN 0 AND 9) NOT VALID;--> statement-breakpoint
-- A recurring job's ticks (and its run-nows) are enqueued at the schedule's priority.
ALTER TABLE "schedules" ADD COLUMN "priority" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_priority_in_range" CHECK (priority BETWEEN 0 AND 9);--> statement-breakpoint
DROP INDEX "jobs_claim_idx";--> statement-breakpoint
CREATE INDEX "jobs_claim_idx" ON "jobs" USING btree ("queue","priority","run_at","job_id") WHERE status IN ('queued', 'retrying');--> statement-breakpoint
DROP INDEX "jobs_claim_type_idx";--> statement-breakpoint
CREATE INDEX "jobs_claim_type_idx" ON "jobs" USING btree ("queue","type","priority","run_at","job_id") WHERE status IN ('queued', 'retrying');
