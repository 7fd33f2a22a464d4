-- The jobs a worker lost: a dead worker's "its jobs" (the console's worker filter) are the
-- jobs it ran last and those it held when it died. The latter have moved on, taken over by
-- other workers, so their own rows name someone else; their lost attempts name it. Partial:
-- the completions, every job's write on the hot path, add no index entry. The build reads
-- the table once while this migration holds its lock (completions wait; about a second per
-- million attempts here).
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
CREATE INDEX "ended_attempts_lost_idx" ON "ended_attempts" USING btree ("worker_id") WHERE outcome = 'lease_lost';
