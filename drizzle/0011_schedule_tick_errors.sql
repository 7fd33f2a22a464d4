-- A schedule whose due tick cannot be enqueued says why, where operators look (the
-- schedules page, GET /api/schedules, the CLI): before, only the workers' log did, once a
-- minute, while each worker retried it four times a second. Cleared by the tick that goes through.
ALTER TABLE "schedules" ADD COLUMN "last_error" text;--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "last_error_at" timestamp with time zone;
