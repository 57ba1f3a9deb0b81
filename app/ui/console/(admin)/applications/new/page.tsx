import { getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { apiGet, requireAdmin } from "@/app/_server/console-next";
import { ApplicationForm } from "../../../_components/application-form";
import { PageHeader } from "../../../_components/ui";

export const dynamic = "force-dynamic";

export default async function NewApplicationPage() {
  const admin = await requireAdmin(`${CONSOLE_PATH}/applications/new`);
  const t = await getTranslations("console.applications");
  const settings = await apiGet<{ lifetimes: { accessToken: number; idToken: number; refreshToken: number } }>(admin.user, "/settings");
  return (
    <>
      <PageHeader title={t("newTitle")} lead={t("newLead")} back={{ href: `${CONSOLE_PATH}/applications`, label: t("title") }} />
      <div className="panel panel-pad">
        <ApplicationForm csrf={admin.csrf} defaults={settings!.lifetimes} />
      </div>
    </>
  );
}
