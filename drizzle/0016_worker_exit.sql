-- How a worker process ended when it did not stop by itself (a crash, SIGKILL, a poison job):
-- its supervisor records it (lib/queue/statements.ts workerDied) along with stopped_at, so the
-- console stops counting a dead process alive for a lease and as stale for a day.
ALTER TABLE "workers" ADD COLUMN IF NOT EXISTS "exit" text;
