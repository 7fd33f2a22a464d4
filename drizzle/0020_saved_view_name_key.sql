-- Saved view names unique per page whatever their case, whatever the database's locale:
-- lower() folds only ASCII letters under LC_CTYPE=C (what `initdb --locale=C` makes), so
-- "Équipe" and "équipe" were two names there. name_key is the name folded by the server
-- (lib/views/store.ts nameKey: Unicode's lower case, the same on every database), and the
-- unique index and the menu's order are on it. Views saved before take lower(name).
ALTER TABLE "saved_views" ADD COLUMN IF NOT EXISTS "name_key" text;--> statement-breakpoint
UPDATE "saved_views" SET "name_key" = lower("name") WHERE "name_key" IS NULL;--> statement-breakpoint
ALTER TABLE "saved_views" ALTER COLUMN "name_key" SET NOT NULL;--> statement-breakpoint
DROP INDEX IF EXISTS "saved_views_page_name_idx";--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS "saved_views_page_name_key_idx" ON "saved_views" USING btree ("page", "name_key");
