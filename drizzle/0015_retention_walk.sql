-- Where the retention walk (lib/queue/statements.ts jobPrune) goes on, shared by every process
-- that sweeps: each sweep continues the one walk, and after a walk they all rest together.
-- One row, read and written under the recover sweep's lock.
CREATE TABLE IF NOT EXISTS "retention_walk" (
  "id" boolean PRIMARY KEY DEFAULT true CHECK ("id"),
  "cursor" bigint NOT NULL DEFAULT 0,
  "rest_until" timestamp with time zone
);--> statement-breakpoint
INSERT INTO "retention_walk" ("id") VALUES (true) ON CONFLICT DO NOTHING;
