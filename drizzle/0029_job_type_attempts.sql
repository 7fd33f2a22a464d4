-- A job type's own number of attempts, declared by its handlers module (jobTypes[type].maxAttempts)
-- and registered with the rest of its definition: a job enqueued without maxAttempts, by any
-- producer on any host, takes its type's (lib/queue/statements.ts attemptsFor), else 3. NULL:
-- the module declared none. A constant-free nullable column: no rewrite of the table.
ALTER TABLE "job_types" ADD COLUMN "max_attempts" integer;--> statement-breakpoint
ALTER TABLE "job_types" ADD CONSTRAINT "job_types_max_attempts_in_range" CHECK (max_attempts BETWEEN 1 AND 100);
