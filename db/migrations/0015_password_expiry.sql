ALTER TABLE "users" ADD COLUMN "password_change_required_since" timestamp with time zone;--> statement-breakpoint
-- Password age (settings passwordPolicy.maxAgeDays) counts from here: no password expires because of the upgrade.
UPDATE "password_credentials" SET "changed_at" = now();
