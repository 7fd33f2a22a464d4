-- The workers' summed counters (and per queue and job type), one row a minute, kept a week
-- (lib/queue/history.ts): the overview's charts and its Job types table over the last 24
-- hours or 7 days, which a console process's memory (an hour, from its start) cannot give.
-- Written by the recover sweep under its lock, so one process writes each minute. The
-- counters are small and read for every chart point; the per-type totals only at a range's
-- two ends, so they have a column of their own.
CREATE TABLE IF NOT EXISTS "stats_samples" (
  "at" timestamp with time zone PRIMARY KEY,
  "counters" jsonb NOT NULL,
  "by_type" jsonb NOT NULL
);
