import { dateOf } from "@/lib/clock";
import type { Engine } from "@/lib/engine";
import { recordAudit, type Actor } from "@/lib/store/audit";
import { hitRateLimit } from "@/lib/store/rate-limit";
import { getUser } from "@/lib/store/users";
import type { MailKind } from "@/lib/mail/render";

/** Notices of one kind an account's owner gets a day at most, so that they cannot flood a mailbox. */
export const NOTICES_PER_DAY = 3;

/**
 * Mails that tell an account's owner what others did with it, without telling the others
 * anything: the account was paused after failed sign-ins, someone tried to register with its
 * name or address, or its address was changed (mailed to the address it had, `to`).
 */
export async function notifyOwner(
  inst: Engine,
  userId: string,
  kind: Extract<MailKind, "accountLocked" | "registrationAttempt" | "emailChanged">,
  actor: Actor,
  values: Record<string, string | number> = {},
  to?: string,
): Promise<void> {
  const user = await getUser(inst.db, userId);
  const address = to ?? user?.email;
  if (!user || !address || user.type !== "human") return;
  const limit = await hitRateLimit(inst.db, `notice:${kind}:${user.id}`, NOTICES_PER_DAY, 86_400, dateOf(inst.clock));
  if (!limit.allowed) return;
  const composed = await inst.mail.compose(kind, { address, locale: user.locale, userId: user.id }, { name: user.givenName || user.name || user.username, ...values });
  const row = await inst.mail.enqueue(inst.db, composed);
  await recordAudit(inst.db, actor, { action: "user.notified", targetType: "user", targetId: user.id, details: { kind, mailId: row.id } });
  inst.mail.kick();
}
