import { usedJtis } from "@/db/schema";
import type { Executor } from "@/lib/db/client";

/**
 * Records that `issuer` used `jti` and says whether this is the first time. The row lives until
 * the assertion would have expired anyway, after which the maintenance sweep removes it.
 */
export async function consumeJtiOnce(db: Executor, issuer: string, jti: string, expiresAt: Date): Promise<boolean> {
  const rows = await db
    .insert(usedJtis)
    .values({ issuer, jti, expiresAt })
    .onConflictDoNothing()
    .returning({ jti: usedJtis.jti });
  return rows.length === 1;
}

// Deprecated: the old name, kept only for lib/oauth/grants/jwt-bearer.ts and
// lib/oauth/client-auth.ts, which are being changed elsewhere right now. Its `use` prefix made
// react-hooks/rules-of-hooks take it for a React hook; switch those callers to consumeJtiOnce and
// delete this alias. (A plain comment, not a JSDoc @deprecated tag, so that it adds no lint
// findings to those files in the meantime.)
export const useJtiOnce = consumeJtiOnce;
