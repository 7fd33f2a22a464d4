-- When the recover sweep last ran, and in which worker process (lib/queue/ops.ts recoverSweep):
-- the console and /api/metrics tell an operator when it has stopped while workers are alive
-- (its lock held by a session that does not sweep), which nothing else would show. One row,
-- written under the sweep's lock with the database's clock.
CREATE TABLE IF NOT EXISTS "recover_sweep" (
  "id" boolean PRIMARY KEY DEFAULT true CHECK ("id"),
  "swept_at" timestamp with time zone,
  "swept_by" text
);--> statement-breakpoint
-- The clock starts now: a sweep that never succeeds after this upgrade is called out too.
INSERT INTO "recover_sweep" ("id", "swept_at") VALUES (true, now()) ON CONFLICT DO NOTHING;
