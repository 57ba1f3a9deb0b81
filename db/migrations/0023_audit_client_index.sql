-- The console's filter of the audit log by client read every event kept; an index serves it.
CREATE INDEX "audit_client_idx" ON "audit_events" USING btree ("client_id");