ALTER TABLE "consents" ADD COLUMN "api_scopes" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
-- Data migration: consents used to keep API scopes among the protocol scopes, without their API.
-- Each such scope goes to every API the client may use that defines it (what the old check
-- accepted); the protocol scopes (lib/protocol/vocabulary.ts SCOPES) stay in "scopes".
UPDATE "consents" AS c SET
  "api_scopes" = COALESCE((
    SELECT jsonb_object_agg(a."identifier", (
      SELECT jsonb_agg(s ORDER BY s) FROM unnest(c."scopes") AS s
      WHERE a."scopes" @> jsonb_build_array(jsonb_build_object('name', s))
    ))
    FROM "apis" AS a JOIN "clients" AS cl ON cl."id" = c."client_id"
    WHERE cl."api_scopes" ? a."identifier"
      AND EXISTS (SELECT 1 FROM unnest(c."scopes") AS s WHERE a."scopes" @> jsonb_build_array(jsonb_build_object('name', s)))
  ), '{}'::jsonb),
  "scopes" = ARRAY(
    SELECT s FROM unnest(c."scopes") AS s
    WHERE s IN ('openid', 'profile', 'email', 'phone', 'address', 'offline_access', 'roles')
    ORDER BY s
  );
