-- Where each refresh family was last refreshed from: a refresh is audited when it comes from another
-- address (or is the family's first), not on every rotation.
ALTER TABLE "refresh_token_families" ADD COLUMN "last_refresh_ip" text;