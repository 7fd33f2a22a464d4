-- A view saved through an API token remembers the token, so that the token (a script that
-- saves views) may delete it again, as a signed-in operator deletes the views they saved.
ALTER TABLE "saved_views" ADD COLUMN "created_by_token" bigint REFERENCES "api_tokens"("token_id") ON DELETE SET NULL;
