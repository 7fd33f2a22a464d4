-- An operator's pause of a schedule (the console, POST /api/schedules/:name/pause, `leasehold
-- schedule pause`), kept apart from `enabled`: `enabled` belongs to the definition, which every
-- worker start upserts again from its module's `schedules` export, so a pause kept there would
-- be undone by the next deploy or worker restart. A pause holds until an operator resumes it.
ALTER TABLE "schedules" ADD COLUMN IF NOT EXISTS "paused_at" timestamp with time zone;
