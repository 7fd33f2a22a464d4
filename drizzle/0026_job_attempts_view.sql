-- job_attempts: one row per claim (CONTRACT.md), the attempt in progress included. An attempt's
-- row is written once, by the statement that ends it (an insert at the claim and an update at
-- the end would cost every job a second write on the hot path), so the stored rows move to
-- ended_attempts and job_attempts becomes a view: those rows, and for each running job the
-- attempt it is running, read from its own row (finished_at, outcome and error NULL). Both
-- halves are served by their primary keys (a job's attempts by job_id).
--
-- The view stays writable for what was written to the table before: a process of an earlier
-- version still running through a deploy inserts its attempts' ends into job_attempts and its
-- retention deletes them from it, and an operator's own DELETE keeps working. The triggers
-- send those to ended_attempts; a running attempt's row is the job's and is not deleted here.
-- The rename waits for the table's lock: behind a long query on job_attempts it would hold every
-- completion queued behind it, so it gives up after 5 s instead (the start fails, saying so; run
-- it again once that query is done).
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
ALTER TABLE "job_attempts" RENAME TO "ended_attempts";--> statement-breakpoint
ALTER TABLE "ended_attempts" RENAME CONSTRAINT "job_attempts_job_id_attempt_pk" TO "ended_attempts_pkey";--> statement-breakpoint
CREATE VIEW "job_attempts" AS
  SELECT job_id, attempt, worker_id, started_at, heartbeat_at, finished_at, outcome, error, error_stack
    FROM "ended_attempts"
  UNION ALL
  SELECT job_id, attempt_count, worker_id, started_at, heartbeat_at,
         NULL::timestamptz, NULL::attempt_outcome, NULL::text, NULL::text
    FROM "jobs"
   WHERE status = 'running';--> statement-breakpoint
CREATE FUNCTION "job_attempts_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, heartbeat_at, finished_at, outcome, error, error_stack)
  VALUES (NEW.job_id, NEW.attempt, NEW.worker_id, NEW.started_at, NEW.heartbeat_at, coalesce(NEW.finished_at, now()),
          NEW.outcome, NEW.error, NEW.error_stack);
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE FUNCTION "job_attempts_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM ended_attempts WHERE job_id = OLD.job_id AND attempt = OLD.attempt AND OLD.finished_at IS NOT NULL;
  IF NOT FOUND THEN
    RETURN NULL; -- a running attempt (the job's own row): not deleted, not counted
  END IF;
  RETURN OLD;
END $$;--> statement-breakpoint
CREATE TRIGGER "job_attempts_insert" INSTEAD OF INSERT ON "job_attempts" FOR EACH ROW EXECUTE FUNCTION "job_attempts_insert"();--> statement-breakpoint
CREATE TRIGGER "job_attempts_delete" INSTEAD OF DELETE ON "job_attempts" FOR EACH ROW EXECUTE FUNCTION "job_attempts_delete"();
