-- The user whose console session (or whose token, in turn) made an API token: disabling that
-- user revokes it (lib/auth/store.ts userDisable). Null for tokens made from the command line
-- (the machine's operator, not an account), and for tokens older tokens made.
ALTER TABLE "api_tokens" ADD COLUMN IF NOT EXISTS "created_by_user_id" bigint;--> statement-breakpoint
-- Tokens made before this column: a session's maker is in created_by as "<name> (user)".
UPDATE "api_tokens" t SET "created_by_user_id" = u."user_id"
  FROM "users" u
 WHERE t."created_by_user_id" IS NULL AND t."created_by" = u."name" || ' (user)';
