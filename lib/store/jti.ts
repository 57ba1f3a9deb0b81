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

