-- A refresh token family from a token exchange ends when its subject and actor tokens would have:
-- no token of it, nor any token its refreshes give, outlives them. Null for every other family.
ALTER TABLE "refresh_token_families" ADD COLUMN "not_after" timestamp with time zone;
