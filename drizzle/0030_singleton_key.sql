-- A singleton key: at most one unfinished job (queued, retrying or running) holds it. An
-- enqueue with the key of such a job returns that job instead of inserting another ("one
-- digest per user at a time"); a finished job lets its key go by finishing, with no write of
-- its own, since the unique index holds unfinished rows only. Keyless rows are not in it.
-- A constant-free nullable column: no rewrite. The check is NOT VALID (every existing row is
-- NULL, and new rows are checked all the same), so only the index reads the table while this
-- migration holds its lock (about 0.2 s per million jobs here).
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "singleton_key" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_singleton_key_length" CHECK (length(singleton_key) BETWEEN 1 AND 255) NOT VALID;--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_singleton_key_idx" ON "jobs" USING btree ("singleton_key") WHERE singleton_key IS NOT NULL AND status IN ('queued', 'retrying', 'running');
