-- Completions write an attempt row per job; the foreign key's per-row trigger cost about a
-- third of that. Attempt rows are written only by statements that hold the job's row lock,
-- and jobDelete deletes them with their job.
ALTER TABLE "job_attempts" DROP CONSTRAINT "job_attempts_job_id_jobs_job_id_fk";
