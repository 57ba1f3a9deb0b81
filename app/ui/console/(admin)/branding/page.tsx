import { getTranslations } from "next-intl/server";
import { saveBranding } from "@/app/_server/console-actions";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { BrandingFields } from "../../_components/brand-preview";
import { ConsoleForm } from "../../_components/form";
import { PageHeader } from "../../_components/ui";

export const dynamic = "force-dynamic";

export default async function BrandingPage() {
  const admin = await requireAdmin(`${CONSOLE_PATH}/branding`);
  const t = await getTranslations("console.branding");
  const b = (await read(admin.user, "getBranding"))!;
  // The preview loads the logo from this origin's path (the page CSP allows 'self' images).
  const logoUrl = b.logoUrl ? new URL(b.logoUrl).pathname + new URL(b.logoUrl).search : null;
  return (
    <>
      <PageHeader title={t("title")} lead={t("lead")} actions={<a className="btn btn-secondary" href={`${CONSOLE_PATH}/texts`}>{t("editTexts")}</a>} />
      <div className="panel panel-pad">
        <ConsoleForm action={saveBranding} csrf={admin.csrf} submitLabel={t("save")} encType="multipart/form-data">
          <BrandingFields
            initial={{ ...b, logoUrl }}
            darkModes={[
              { value: "auto", label: t("modeAuto") },
              { value: "light", label: t("modeLight") },
              { value: "dark", label: t("modeDark") },
            ]}
          />
        </ConsoleForm>
      </div>
    </>
  );
}
