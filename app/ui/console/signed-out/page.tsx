import { getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { SignedOutCard } from "@/app/ui/components/signed-out-card";
import "../console.css";

export const dynamic = "force-dynamic";

export default async function ConsoleSignedOutPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const failed = !!(await searchParams).failed;
  const t = await getTranslations("console.access");
  return (
    <SignedOutCard
      failed={failed}
      title={failed ? t("failedTitle") : t("signedOutTitle")}
      text={failed ? t("failedText") : t("signedOutText")}
      signIn={t("signIn")}
      href={`${CONSOLE_PATH}/signin`}
    />
  );
}
