import { sql } from "drizzle-orm";
import { clients, instanceSettings } from "@/db/schema";
import type { Executor } from "@/lib/db/client";

/**
 * The longest time a JWT signed now can stay valid: the longest access or ID token lifetime of
 * any client or of the instance defaults, and at least an hour. A retired signing key stays
 * published, and a revocation record kept, at least that long.
 */
export async function longestTokenLifetime(db: Executor): Promise<number> {
  const [c] = await db
    .select({ m: sql<number>`coalesce(max(greatest(${clients.accessTokenLifetime}, ${clients.idTokenLifetime})), 0)`.mapWith(Number) })
    .from(clients);
  const [s] = await db.select({ lifetimes: instanceSettings.lifetimes }).from(instanceSettings);
  const defaults = s ? Math.max(s.lifetimes.accessToken, s.lifetimes.idToken) : 0;
  return Math.max(c?.m ?? 0, defaults, 3600);
}
