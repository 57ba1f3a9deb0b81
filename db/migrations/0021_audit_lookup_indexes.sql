-- The audit log is read by actor and by target id (the console's filters, the account page's events
-- of one user); the old target index was led by target_type, which none of those reads names, so
-- each of them scanned every event kept.
DROP INDEX "audit_target_idx";--> statement-breakpoint
CREATE INDEX "audit_actor_idx" ON "audit_events" USING btree ("actor_id");--> statement-breakpoint
CREATE INDEX "audit_target_idx" ON "audit_events" USING btree ("target_id");