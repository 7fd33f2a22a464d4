-- The counters of worker incarnations gone for a week, folded into one row (lib/queue/
-- worker-totals.ts foldOldWorkers, run by the recover sweep): the workers table keeps the
-- live and recent processes only, and every sum over the workers' counters (the metrics, the
-- charts, the Job types table, the stats record) reads this row beside them, so no total
-- goes down when a row is folded.
CREATE TABLE IF NOT EXISTS "worker_totals_archive" (
  "id" boolean PRIMARY KEY DEFAULT true CHECK ("id"),
  "metrics" jsonb NOT NULL DEFAULT '{}'::jsonb,
  "workers" integer NOT NULL DEFAULT 0,
  "folded_at" timestamp with time zone NOT NULL DEFAULT now()
);
