-- Jobs by when they finished: the lists' finishedSince windows ("completed in the last 15
-- minutes") read the jobs that finished in the window from here instead of every id (a job
-- enqueued long ago may finish now: no id range bounds them). Finished rows only, so a
-- completion (or a failure, a cancel) adds one entry, an enqueue or a claim none; finished_at
-- is indexed already (jobs_failed_idx), so no update that was HOT stops being one.
CREATE INDEX IF NOT EXISTS "jobs_finished_idx" ON "jobs" USING btree ("finished_at") WHERE finished_at IS NOT NULL;
