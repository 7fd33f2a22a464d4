-- A worker claims only the job types it has handlers for. Its claims from PostgreSQL (and the
-- sweep's re-rings) read due jobs one type at a time from this index, so a backlog of jobs of
-- types no live worker handles is never read past (on jobs_claim_idx alone, a claim behind a
-- million of them took 100-150 ms). Partial, like jobs_claim_idx: only waiting jobs.
CREATE INDEX "jobs_claim_type_idx" ON "jobs" USING btree ("queue","type","run_at","job_id") WHERE status IN ('queued', 'retrying');
