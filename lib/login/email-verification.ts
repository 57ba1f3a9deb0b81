import { dateOf } from "@/lib/clock";
import { randomInt } from "node:crypto";
import type { Engine } from "@/lib/engine";
import { randomToken } from "@/lib/crypto";
import { recordAudit, type Actor } from "@/lib/store/audit";
import { createEmailVerification, consumeEmailCode, consumeEmailToken, type EmailVerification } from "@/lib/store/email-verifications";
import { hitRateLimit } from "@/lib/store/rate-limit";
import { getSettings } from "@/lib/store/settings";
import { accountPolicyOf } from "./account-policy";
import { getUser, updateUser, type User } from "@/lib/store/users";
import { LOGIN_PATHS } from "./paths";

/**
 * Email verification: a mail with a 6-digit code (typed on the sign-in page when the policy
 * requires a verified address) and a link (the mail's button), both single-use for a day. Sent at
 * registration, when an address changes, and on request (rate-limited). `email_verified` is true
 * only once the code or the link came back for the address the user has now.
 */

export const VERIFICATION_LIFETIME_SECONDS = 86_400;
/** Verification mails per user and hour (registration, changes and "send a new code" together). */
export const VERIFICATION_MAILS_PER_HOUR = 5;

export function verifyLinkUrl(issuer: string, token: string): string {
  return `${issuer}${LOGIN_PATHS.verifyLink}?token=${encodeURIComponent(token)}`;
}

/** Mails a new code and link for the user's address; null when there is nothing to verify, the policy is off, or the limit is reached. */
export async function sendEmailVerification(inst: Engine, user: User, actor: Actor, locale: string | null): Promise<string | null> {
  if (!user.email || user.emailVerified || user.type !== "human") return null;
  const settings = await getSettings(inst);
  if (accountPolicyOf(settings).emailVerification === "off") return null;
  const limit = await hitRateLimit(inst.db, `verify:user:${user.id}`, VERIFICATION_MAILS_PER_HOUR, 3600, dateOf(inst.clock));
  if (!limit.allowed) return null;
  const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
  const token = randomToken(32);
  // Composed before the transaction opens (Mailer.compose says why).
  const composed = await inst.mail.compose(
    "verifyEmail",
    { address: user.email, locale: locale ?? user.locale, userId: user.id },
    { name: user.givenName || user.name || user.username, code, hours: VERIFICATION_LIFETIME_SECONDS / 3600, url: verifyLinkUrl(inst.issuer, token) },
  );
  const email = user.email;
  const id = await inst.db.transaction(async (tx) => {
    await createEmailVerification(tx, inst.masterKey, { userId: user.id, email, code, token, lifetimeSeconds: VERIFICATION_LIFETIME_SECONDS }, dateOf(inst.clock));
    const row = await inst.mail.enqueue(tx, composed);
    await recordAudit(tx, actor, { action: "user.email_verification_sent", targetType: "user", targetId: user.id, details: { mailId: row.id } });
    return row.id;
  });
  inst.mail.kick();
  return id;
}

/** Marks the address verified when the verification was for the address the user has now. */
async function markVerified(inst: Engine, used: EmailVerification | undefined, actor: Actor): Promise<User | undefined> {
  if (!used) return undefined;
  const user = await getUser(inst.db, used.userId);
  if (!user || user.email?.toLowerCase() !== used.email.toLowerCase()) return undefined;
  const updated = await updateUser(inst.db, user.id, { emailVerified: true }, dateOf(inst.clock));
  await recordAudit(inst.db, { ...actor, type: "user", id: user.id }, { action: "user.email_verified", targetType: "user", targetId: user.id, details: { email: used.email } });
  return updated;
}

/** The code typed on the sign-in page; true once the address is verified. */
export async function confirmEmailCode(inst: Engine, userId: string, code: string, actor: Actor): Promise<boolean> {
  if (!/^\d{6}$/.test(code)) return false;
  return !!(await markVerified(inst, await consumeEmailCode(inst.db, inst.masterKey, userId, code, dateOf(inst.clock)), actor));
}

/** The mail's link; the user it verified, or undefined for a used, expired or forged link. */
export async function confirmEmailLink(inst: Engine, token: string, actor: Actor): Promise<User | undefined> {
  if (!token) return undefined;
  return markVerified(inst, await consumeEmailToken(inst.db, inst.masterKey, token, dateOf(inst.clock)), actor);
}
