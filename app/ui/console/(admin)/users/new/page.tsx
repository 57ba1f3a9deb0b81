import { getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { requireAdmin } from "@/app/_server/console-next";
import { UserForm } from "../../../_components/user-forms";
import { PageHeader } from "../../../_components/ui";

export const dynamic = "force-dynamic";

export default async function NewUserPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const sp = await searchParams;
  const type = sp.type === "machine" ? "machine" : "human";
  const admin = await requireAdmin(`${CONSOLE_PATH}/users/new?type=${type}`);
  const t = await getTranslations("console.users");
  return (
    <>
      <PageHeader title={type === "machine" ? t("newMachineTitle") : t("newTitle")} lead={type === "machine" ? t("newMachineLead") : t("newLead")} back={{ href: `${CONSOLE_PATH}/users`, label: t("title") }} />
      <nav className="segmented" aria-label={t("typeLabel")}>
        <a href={`${CONSOLE_PATH}/users/new`} aria-current={type === "human" ? "page" : undefined}>
          {t("type.human")}
        </a>
        <a href={`${CONSOLE_PATH}/users/new?type=machine`} aria-current={type === "machine" ? "page" : undefined}>
          {t("type.machine")}
        </a>
      </nav>
      <div className="panel panel-pad">
        <UserForm csrf={admin.csrf} type={type} />
      </div>
    </>
  );
}
