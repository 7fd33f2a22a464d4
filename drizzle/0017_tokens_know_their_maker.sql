-- The user whose console session (or whose token, in turn) made an API token: disabling that
-- user revokes it (lib/auth/store.ts userDisable). Null for tokens made from the command line
-- (the machine's operator, not an account) and for tokens made before this column.
ALTER TABLE "api_tokens" ADD COLUMN IF NOT EXISTS "created_by_user_id" bigint;
