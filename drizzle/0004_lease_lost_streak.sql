-- Consecutive lease losses per job: a job that keeps dying with its process is a suspect, and
-- a worker holds one suspect at a time, so a poison job cannot exhaust its neighbours' attempts.
ALTER TABLE "jobs" ADD COLUMN "lease_lost_streak" integer DEFAULT 0 NOT NULL;