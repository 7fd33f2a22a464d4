-- A handler's SnoozeError: its attempt ended without a verdict, the job put off (queued, due
-- later) and the attempt given back. Its own outcome, so the job's history says "snoozed"
-- rather than a failure. Only added here: a value added inside a transaction cannot be used
-- in it, and no later statement of this migration uses it.
ALTER TYPE "public"."attempt_outcome" ADD VALUE 'snoozed';
