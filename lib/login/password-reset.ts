import { dateOf } from "@/lib/clock";
import type { Engine } from "@/lib/engine";
import { addressForLimits } from "@/lib/http/client-address";
import { checkPasswordPolicy, type PolicyViolation } from "@/lib/passwords";
import { recordAudit, type Actor } from "@/lib/store/audit";
import { cutOffUser } from "@/lib/store/cut-off";
import { mutate } from "@/lib/store/invalidation";
import { consumePasswordReset, createPasswordReset, findPasswordReset, retirePasswordResets } from "@/lib/store/password-resets";
import { hitRateLimit } from "@/lib/store/rate-limit";
import { getSettings } from "@/lib/store/settings";
import { findUserByLoginName, findUsersByEmail, getUser, setPassword, type User } from "@/lib/store/users";
import { loginNameOf } from "@/lib/users/fields";
import { randomToken } from "@/lib/crypto";
import { liftUserLockout } from "./lockout";
import { LOGIN_PATHS } from "./paths";

/**
 * Password reset by mail. A request names a login name or an email address; whether an account
 * matches is never shown (the page after it is the same). The link carries 256 random bits, of
 * which only the hash is stored; it works once, for the configured time. Requests are limited
 * per address and per account, so that nobody can flood someone's mailbox. Setting the new
 * password applies the password policy, ends every session of the user and revokes their tokens.
 */

/**
 * Reset requests per hour: from one client address, and for one account; and how many accounts
 * sharing one email address one request mails.
 */
export const RESET_LIMITS = { perAddress: 10, perAccount: 3, windowSeconds: 3600, accountsPerAddress: 5 };

/** The link a reset mail carries. */
export function resetUrl(issuer: string, token: string): string {
  return `${issuer}${LOGIN_PATHS.reset}?token=${encodeURIComponent(token)}`;
}

/**
 * Writes a reset link and its mail in one transaction (with the audit event), then starts
 * delivery. Returns the outbox mail's id, or null for a user without an email address.
 */
export async function sendPasswordReset(inst: Engine, user: User, actor: Actor, locale: string | null): Promise<string | null> {
  if (!user.email || user.type !== "human") return null;
  const settings = await getSettings(inst);
  const lifetime = settings.accountPolicy.passwordResetLinkSeconds;
  // Rendered before the transaction opens (Mailer.compose says why).
  const token = randomToken(32);
  const composed = await inst.mail.compose(
    "passwordReset",
    // The owner reads it: their language first, else the one of the page that asked.
    { address: user.email, locale: user.locale ?? locale, userId: user.id },
    { name: user.givenName || user.name || user.username, loginName: loginNameOf(user, settings.primaryDomain), minutes: Math.round(lifetime / 60), url: resetUrl(inst.issuer, token) },
  );
  const id = await inst.db.transaction(async (tx) => {
    await createPasswordReset(tx, user.id, lifetime, dateOf(inst.clock), token);
    const row = await inst.mail.enqueue(tx, composed);
    await recordAudit(tx, actor, { action: "user.password_reset_requested", targetType: "user", targetId: user.id, details: { mailId: row.id } });
    return row.id;
  });
  inst.mail.kick();
  return id;
}

/**
 * A reset requested on the login page: the account by login name, else every account with that
 * email address (each its own link). Limited per address and per account; the caller shows the
 * same page whatever happened, and runs this after answering (lib/background.ts).
 */
export async function requestPasswordReset(inst: Engine, loginNameOrEmail: string, actor: Actor & { ip: string | null }, locale: string): Promise<void> {
  const perAddress = await hitRateLimit(inst.db, `reset:ip:${addressForLimits(actor.ip ?? "unknown")}`, RESET_LIMITS.perAddress, RESET_LIMITS.windowSeconds, dateOf(inst.clock));
  if (!perAddress.allowed) return;
  const settings = await getSettings(inst);
  const value = loginNameOrEmail.trim();
  const byName = await findUserByLoginName(inst.db, value, settings.primaryDomain);
  // An address several accounts share: each of them gets its own link (the mail names the
  // account), so that whoever reads that mailbox can reset the one they mean.
  const users = byName ? [byName] : value.includes("@") ? (await findUsersByEmail(inst.db, value)).slice(0, RESET_LIMITS.accountsPerAddress) : [];
  for (const user of users) {
    if (user.locked) continue;
    const perAccount = await hitRateLimit(inst.db, `reset:user:${user.id}`, RESET_LIMITS.perAccount, RESET_LIMITS.windowSeconds, dateOf(inst.clock));
    if (perAccount.allowed) await sendPasswordReset(inst, user, actor, locale);
  }
}

/** The user a reset link is for, while it works. */
export async function resetLinkUser(inst: Engine, token: string): Promise<User | undefined> {
  const reset = token ? await findPasswordReset(inst.db, token, dateOf(inst.clock)) : undefined;
  return reset ? getUser(inst.db, reset.userId) : undefined;
}

export type ResetOutcome = { ok: true; user: User } | { ok: false; reason: "invalidLink" } | { ok: false; reason: "policy"; violations: PolicyViolation[] } | { ok: false; reason: "mismatch" };

/**
 * Sets the new password through a reset link: policy first (the link stays usable to try again),
 * then in one transaction the link is used, every other link retired, the password set, every
 * session ended and token revoked, the account's lockouts lifted, and the event recorded.
 */
export async function completePasswordReset(inst: Engine, token: string, password: string, confirm: string, actor: Actor): Promise<ResetOutcome> {
  const user = await resetLinkUser(inst, token);
  if (!user) return { ok: false, reason: "invalidLink" };
  if (password !== confirm) return { ok: false, reason: "mismatch" };
  const settings = await getSettings(inst);
  const violations = checkPasswordPolicy(password, settings.passwordPolicy);
  if (violations.length) return { ok: false, reason: "policy", violations };
  // Revoked tokens leave the token caches of every instance once this commits.
  const done = await mutate(inst, [{ cache: "accessTokens" }], async (tx) => {
    const reset = await consumePasswordReset(tx, token, dateOf(inst.clock));
    if (!reset) return false;
    await retirePasswordResets(tx, reset.userId, dateOf(inst.clock));
    await setPassword(tx, reset.userId, password, { now: dateOf(inst.clock) });
    await cutOffUser(tx, reset.userId, "password_reset", dateOf(inst.clock));
    await liftUserLockout(tx, reset.userId, dateOf(inst.clock));
    await recordAudit(tx, { ...actor, type: "user", id: reset.userId }, { action: "user.password_reset", targetType: "user", targetId: reset.userId, details: {} });
    return true;
  });
  return done ? { ok: true, user } : { ok: false, reason: "invalidLink" };
}
