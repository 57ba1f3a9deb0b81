import type { getTranslations } from "next-intl/server";

type LoginT = Awaited<ReturnType<typeof getTranslations<"login">>>;

/** The sentence for a try the lockout refused (throttled, or the account paused), or null. */
export function lockoutMessage(t: LoginT, formError: string | null, formValues: Record<string, string> | null): string | null {
  if (formError !== "throttled" && formError !== "accountLocked") return null;
  const seconds = Math.max(1, Number(formValues?.retrySeconds) || 60);
  const minutes = Math.ceil(seconds / 60);
  if (formError === "accountLocked") return t("errors.accountLocked", { minutes });
  return seconds < 120 ? t("errors.throttled", { seconds }) : t("errors.throttledMinutes", { minutes });
}
