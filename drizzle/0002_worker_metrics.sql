-- Worker processes report cumulative counters and histograms with each heartbeat, so the
-- console and /api/metrics can add them up across processes and hosts.
ALTER TABLE "workers" ADD COLUMN "metrics" jsonb DEFAULT '{}'::jsonb NOT NULL;