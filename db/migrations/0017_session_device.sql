-- Where each session's latest sign-in came from (client address, User-Agent), for the account page.
ALTER TABLE "sessions" ADD COLUMN "ip" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "user_agent" text;
