CREATE TABLE "account_lockouts" (
	"account_key" text PRIMARY KEY NOT NULL,
	"user_id" text,
	"locked_at" timestamp with time zone NOT NULL,
	"locked_until" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "login_failures" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_key" text NOT NULL,
	"address" text NOT NULL,
	"trusted" boolean DEFAULT false NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "instance_settings" ADD COLUMN "retention" jsonb DEFAULT '{"auditDays":90}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "account_lockouts" ADD CONSTRAINT "account_lockouts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_lockouts_user_idx" ON "account_lockouts" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "login_failures_account_idx" ON "login_failures" USING btree ("account_key","at");--> statement-breakpoint
CREATE INDEX "login_failures_address_idx" ON "login_failures" USING btree ("address","at");--> statement-breakpoint
CREATE INDEX "login_failures_at_idx" ON "login_failures" USING btree ("at");--> statement-breakpoint
-- The lockout policy changes shape ({maxFailures, windowSeconds} with a clock-aligned window and a
-- lock of everyone): the old maximum becomes the free failures per account and address, the old
-- window the sliding window, and the address gets the old factor of ten.
UPDATE "instance_settings" SET "lockout_policy" = jsonb_build_object(
	'windowSeconds', COALESCE(("lockout_policy"->>'windowSeconds')::int, 3600),
	'freeFailures', COALESCE(("lockout_policy"->>'maxFailures')::int, 5),
	'addressFreeFailures', COALESCE(("lockout_policy"->>'maxFailures')::int * 10, 100),
	'maxDelaySeconds', 900,
	'lockAfterFailures', 50,
	'lockSeconds', 3600
) WHERE NOT ("lockout_policy" ? 'freeFailures');--> statement-breakpoint
UPDATE "instance_settings" SET "rate_limits" = jsonb_build_object('registrationPerHour', 20) || "rate_limits"
WHERE NOT ("rate_limits" ? 'registrationPerHour');
