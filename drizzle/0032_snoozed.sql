-- A handler's SnoozeError: its attempt ended without a verdict, the job put off (queued, due
-- later) and the attempt given back. Its own outcome, so the job's history says "snoozed"
-- rather than a failure. Only added here: a value added inside a transaction cannot be used
-- in it, and every pending migration runs in one transaction (drizzle's), so no LATER
-- MIGRATION may use 'snoozed' either (an index or a view naming it would fail an upgrade
-- that applies this one in the same run; lib/db/migrate.db.test.ts checks).
ALTER TYPE "public"."attempt_outcome" ADD VALUE 'snoozed';
