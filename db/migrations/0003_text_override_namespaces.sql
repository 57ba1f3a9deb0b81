-- Text overrides are now keyed by their full catalog path, so that the sign-out and authorization
-- pages' texts can be overridden too; the keys written so far were all below the login namespace.
UPDATE "text_overrides" SET "key" = 'login.' || "key";
