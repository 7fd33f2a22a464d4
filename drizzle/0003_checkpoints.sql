-- Checkpoints: a handler's progress, kept on the job row (fenced writes) so that the next
-- attempt after a crash resumes from the last step instead of starting over.
ALTER TABLE "jobs" ADD COLUMN "checkpoints" jsonb;