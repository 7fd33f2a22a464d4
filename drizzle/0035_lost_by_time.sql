-- The leases lost in a window, per queue and job type: the overview's Job types table reads
-- them from the attempts themselves, since the workers' own counters lose what a process
-- counted and was killed before reporting (a poison job kills the very worker that took it
-- over). Partial, as ended_attempts_lost_idx: completions add no entry. The build reads the
-- table once while this migration holds its lock (about a second per million attempts here).
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
CREATE INDEX "ended_attempts_lost_at_idx" ON "ended_attempts" USING btree ("finished_at") WHERE outcome = 'lease_lost';
