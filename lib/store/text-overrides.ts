import { and, eq, inArray } from "drizzle-orm";
import { textOverrides } from "@/db/schema";
import type { Executor } from "@/lib/db/client";

/** Storage of administrators' text overrides (lib/i18n/overrides.ts validates, caches and applies them). */

export async function readOverrides(db: Executor, locale: string): Promise<Record<string, string>> {
  const rows = await db
    .select({ key: textOverrides.key, value: textOverrides.value })
    .from(textOverrides)
    .where(eq(textOverrides.locale, locale));
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

/** Sets (string) or resets (null) overrides of one locale; call it inside mutateOverrides (lib/i18n/overrides.ts). */
export async function writeOverrides(db: Executor, locale: string, changes: Record<string, string | null>, now: Date): Promise<void> {
  const reset = Object.entries(changes).filter(([, v]) => v === null).map(([k]) => k);
  if (reset.length) {
    await db.delete(textOverrides).where(and(eq(textOverrides.locale, locale), inArray(textOverrides.key, reset)));
  }
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) continue;
    await db
      .insert(textOverrides)
      .values({ locale, key, value, updatedAt: now })
      .onConflictDoUpdate({ target: [textOverrides.locale, textOverrides.key], set: { value, updatedAt: now } });
  }
}
