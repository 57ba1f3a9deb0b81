import { getTranslations } from "next-intl/server";
import { ACCOUNT_PATH } from "@torii/core/account/app";
import { NoticeCard } from "@/app/ui/components/notice-card";

export const dynamic = "force-dynamic";

export default async function AccountSignedOutPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const failed = !!(await searchParams).failed;
  const t = await getTranslations("account.signedOut");
  return (
    <NoticeCard
      status={failed ? "warn" : "ok"}
      title={failed ? t("failedTitle") : t("title")}
      text={failed ? t("failedText") : t("text")}
      action={t("signIn")}
      href={`${ACCOUNT_PATH}/signin`}
    />
  );
}
