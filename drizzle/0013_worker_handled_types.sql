-- The job types each worker process has handlers for: its claims take no other type, so a
-- job of a type no live worker on its queue handles waits, and the console says so. NULL for
-- a process of an earlier version, which claimed any type.
ALTER TABLE "workers" ADD COLUMN "types" text[];
