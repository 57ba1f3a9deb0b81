import type { getTranslations } from "next-intl/server";

type LoginT = Awaited<ReturnType<typeof getTranslations<"login">>>;

/**
 * The sentence for a password the policy refused, naming what it lacks: the same on the
 * registration, reset and change-password pages. `violations` are the policy's codes
 * (lib/passwords.ts `PolicyViolation`), as the form handler passed them on.
 */
export function passwordPolicyMessage(t: LoginT, violations: readonly string[], minLength: number): string {
  return `${t("errors.passwordPolicy")} ${violations.map((v) => t(`policy.${v}` as "policy.minLength", { min: minLength })).join(", ")}.`;
}
