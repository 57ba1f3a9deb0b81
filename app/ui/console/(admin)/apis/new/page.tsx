import { getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { ApiForm } from "../../../_components/api-form";
import { PageHeader } from "../../../_components/ui";

export const dynamic = "force-dynamic";

export default async function NewApiPage() {
  const admin = await requireAdmin(`${CONSOLE_PATH}/apis/new`);
  const t = await getTranslations("console.apis");
  const settings = await read(admin.user, "getSettings");
  return (
    <>
      <PageHeader title={t("newTitle")} lead={t("newLead")} back={{ href: `${CONSOLE_PATH}/apis`, label: t("title") }} />
      <div className="panel panel-pad">
        <ApiForm csrf={admin.csrf} defaultLifetime={settings!.lifetimes.accessToken} />
      </div>
    </>
  );
}
