-- Most tokens have no refresh family (access tokens) or no session (client credentials): indexing
-- only the rows that have one saves an index insertion on every such token issued.
DROP INDEX "tokens_family_idx";--> statement-breakpoint
DROP INDEX "tokens_session_idx";--> statement-breakpoint
CREATE INDEX "tokens_family_idx" ON "tokens" USING btree ("family_id") WHERE "tokens"."family_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "tokens_session_idx" ON "tokens" USING btree ("session_id") WHERE "tokens"."session_id" IS NOT NULL;
