import { getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { NoticeCard } from "@/app/ui/components/notice-card";
import "../console.css";

export const dynamic = "force-dynamic";

export default async function ConsoleSignedOutPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const failed = !!(await searchParams).failed;
  const t = await getTranslations("console.access");
  return (
    <NoticeCard
      status={failed ? "warn" : "ok"}
      title={failed ? t("failedTitle") : t("signedOutTitle")}
      text={failed ? t("failedText") : t("signedOutText")}
      action={t("signIn")}
      href={`${CONSOLE_PATH}/signin`}
    />
  );
}
