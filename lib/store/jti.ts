import { sql } from "drizzle-orm";
import { usedJtis } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { statement } from "./statement";
import { runGuard, type GuardWrite } from "./write";

/**
 * Records that `issuer` used `jti` and says whether this is the first time. The row lives until
 * the assertion would have expired anyway, after which the maintenance sweep removes it.
 */
export function consumeJtiOnceWrite(db: Executor, issuer: string, jti: string, expiresAt: Date): GuardWrite {
  return {
    guard: statement(
      db,
      "replay.consumeOnce",
      (p) =>
        db
          .insert(usedJtis)
          .values({ issuer: p("issuer"), jti: p("jti"), expiresAt: sql`${p("expiresAt")}::timestamptz` } as never)
          .onConflictDoNothing()
          .returning({ jti: usedJtis.jti }),
      { issuer, jti, expiresAt: expiresAt.toISOString() },
    ),
  };
}

export function consumeJtiOnce(db: Executor, issuer: string, jti: string, expiresAt: Date): Promise<boolean> {
  return runGuard(consumeJtiOnceWrite(db, issuer, jti, expiresAt));
}

