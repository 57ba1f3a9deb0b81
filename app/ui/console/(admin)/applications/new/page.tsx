import { getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { ApplicationForm } from "../../../_components/application-form";
import { PageHeader } from "../../../_components/ui";

export const dynamic = "force-dynamic";

export default async function NewApplicationPage() {
  const admin = await requireAdmin(`${CONSOLE_PATH}/applications/new`);
  const t = await getTranslations("console.applications");
  const [settings, apis] = await Promise.all([read(admin.user, "getSettings"), read(admin.user, "listApis")]);
  return (
    <>
      <PageHeader title={t("newTitle")} lead={t("newLead")} back={{ href: `${CONSOLE_PATH}/applications`, label: t("title") }} />
      <div className="panel panel-pad">
        <ApplicationForm csrf={admin.csrf} defaults={settings!.lifetimes} apis={apis?.apis ?? []} />
      </div>
    </>
  );
}
