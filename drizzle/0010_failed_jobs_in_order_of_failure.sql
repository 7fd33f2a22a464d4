-- The dead letter in the order jobs failed, newest first: a job enqueued long ago that fails
-- now has an old id, and in id order it landed deep in the list, unannounced. Only failed
-- rows are in it: a failure adds an entry, a claim or a completion none.
CREATE INDEX "jobs_failed_idx" ON "jobs" USING btree ("finished_at" DESC NULLS LAST,"job_id" DESC NULLS LAST) WHERE status = 'failed';
