-- Nothing looks tokens up by grant or by session any more (revoking either marks the grant and its
-- refresh families, which every use of a token checks): two index insertions saved on every
-- refresh token issued.
DROP INDEX "tokens_grant_idx";--> statement-breakpoint
DROP INDEX "tokens_session_idx";
