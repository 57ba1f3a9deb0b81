-- Every statement that writes a table the authorization endpoint's browser read depends on
-- (lib/store/remembered-browsers.ts, BROWSER_TABLES) tells, on commit, the instances that keep
-- that read in memory on PostgreSQL (lib/db/write-notices.ts). It only notifies: it writes no
-- table. The payload is the table's name.
CREATE FUNCTION torii_notify_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('torii_writes', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER user_agents_write_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "user_agents" FOR EACH STATEMENT EXECUTE FUNCTION torii_notify_write();
--> statement-breakpoint
CREATE TRIGGER sessions_write_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "sessions" FOR EACH STATEMENT EXECUTE FUNCTION torii_notify_write();
--> statement-breakpoint
CREATE TRIGGER users_write_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "users" FOR EACH STATEMENT EXECUTE FUNCTION torii_notify_write();
--> statement-breakpoint
CREATE TRIGGER user_factors_write_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "user_factors" FOR EACH STATEMENT EXECUTE FUNCTION torii_notify_write();
--> statement-breakpoint
CREATE TRIGGER password_credentials_write_notice AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "password_credentials" FOR EACH STATEMENT EXECUTE FUNCTION torii_notify_write();
