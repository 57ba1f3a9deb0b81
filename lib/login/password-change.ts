import { dateOf } from "@/lib/clock";
import type { Engine } from "@/lib/engine";
import { checkPasswordPolicy, verifyPassword, type PolicyViolation } from "@/lib/passwords";
import { recordAudit, type Actor } from "@/lib/store/audit";
import { updateAuthRequest } from "@/lib/store/auth-requests";
import { revocationHorizon, revokeSessionTokens } from "@/lib/store/grants";
import { mutate } from "@/lib/store/invalidation";
import { endUserSession, liveSessionsOfUser } from "@/lib/store/sessions";
import { getPasswordHash, setPassword } from "@/lib/store/users";
import type { SessionAccount } from "./steps";

/**
 * The sign-in's `changePassword` step (lib/login/signin-policy.ts `password_expired`): the user has
 * just proven the current password, which is due for a change, and chooses a new one.
 */

export type ChangeOutcome = { ok: true } | { ok: false; reason: "mismatch" | "samePassword" } | { ok: false; reason: "policy"; violations: PolicyViolation[] };

/**
 * The new password, twice, under the password policy and not the current one. In one transaction
 * the password is set (which ends an administrator's demand for a new one and restarts its age),
 * every other session of the user ends with its tokens (as on the account page: whoever knew the
 * old password is out), the change is recorded, and the pending request forgets the form.
 */
export async function changeDuePassword(
  inst: Engine,
  opts: { account: SessionAccount; password: string; confirm: string; passwordPolicy: Parameters<typeof checkPasswordPolicy>[1]; authRequestId: string; clientId: string; actor: Actor },
): Promise<ChangeOutcome> {
  const { account, password } = opts;
  if (password !== opts.confirm) return { ok: false, reason: "mismatch" };
  const violations = checkPasswordPolicy(password, opts.passwordPolicy);
  if (violations.length) return { ok: false, reason: "policy", violations };
  const current = await getPasswordHash(inst.db, account.userId);
  if (current && (await verifyPassword(current, password))) return { ok: false, reason: "samePassword" };
  // What made it due, for the audit log: an administrator's demand, else its age.
  const reason = account.passwordChangeRequiredSince ? "required" : "expired";
  const now = dateOf(inst.clock);
  await mutate(inst, [{ cache: "accessTokens" }], async (tx) => {
    await setPassword(tx, account.userId, password, { now });
    const others = (await liveSessionsOfUser(tx, account.userId, now)).filter((s) => s.id !== account.id);
    const horizon = others.length ? await revocationHorizon(tx, now) : now;
    for (const s of others) {
      await endUserSession(tx, account.userId, s.id, now);
      await revokeSessionTokens(tx, s.id, "password_changed", { horizon, now });
    }
    await recordAudit(tx, { ...opts.actor, id: account.userId }, {
      action: "user.password_changed",
      targetType: "user",
      targetId: account.userId,
      clientId: opts.clientId,
      details: { reason, during: "signin", sessionsEnded: others.length },
    });
    await updateAuthRequest(tx, opts.authRequestId, { formError: null, formValues: null });
  });
  return { ok: true };
}
