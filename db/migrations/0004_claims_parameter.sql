ALTER TABLE "auth_requests" ADD COLUMN "claims" jsonb;--> statement-breakpoint
ALTER TABLE "grants" ADD COLUMN "claims" jsonb;