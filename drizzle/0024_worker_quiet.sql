-- A worker process an operator has quieted (lib/queue/ops.ts workerSetQuiet): it claims no
-- new job, finishes those in hand, and keeps renewing their leases, running the recover
-- sweep and the schedules; it reads the request with its next heartbeat. Cleared to resume.
-- The console counts a quiet worker alive but serving no queue.
ALTER TABLE "workers" ADD COLUMN IF NOT EXISTS "quiet_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workers" ADD COLUMN IF NOT EXISTS "quiet_by" text;
