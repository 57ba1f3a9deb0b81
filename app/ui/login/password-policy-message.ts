import type { getTranslations } from "next-intl/server";
import { knownPolicyViolations } from "@torii/core/passwords";

type LoginT = Awaited<ReturnType<typeof getTranslations<"login">>>;

/**
 * The sentence for a password the policy refused, naming what it lacks: the same on the
 * registration, reset and change-password pages. `violations` are the policy's codes
 * (lib/passwords.ts `PolicyViolation`), as the form handler passed them on.
 */
export function passwordPolicyMessage(t: LoginT, violations: readonly string[], minLength: number): string {
  const known = knownPolicyViolations(violations);
  if (!known.length) return t("errors.passwordPolicy");
  return `${t("errors.passwordPolicy")} ${known.map((v) => t(`policy.${v}`, { min: minLength })).join(", ")}.`;
}

/**
 * The error of a "new password, twice" form (reset, change), from the handler's code and the
 * comma-separated violations it passed on; null for a code this form does not know.
 */
export function newPasswordError(t: LoginT, code: unknown, violations: unknown, minLength: number): string | null {
  if (code === "mismatch") return t("errors.passwordMismatch");
  if (code !== "policy") return null;
  const list = (typeof violations === "string" ? violations : "").split(",").filter(Boolean);
  return passwordPolicyMessage(t, list, minLength);
}
