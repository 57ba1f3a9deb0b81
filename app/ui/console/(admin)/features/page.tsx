import { getTranslations } from "next-intl/server";
import { setFeature } from "@/app/_server/console-actions";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { FeatureToggle } from "../../_components/toggle";
import { PageHeader } from "../../_components/ui";

export const dynamic = "force-dynamic";

export default async function FeaturesPage() {
  const admin = await requireAdmin(`${CONSOLE_PATH}/features`);
  const t = await getTranslations("console.features");
  const f = (await read(admin.user, "getFeatures"))!;
  return (
    <>
      <PageHeader title={t("title")} lead={t("lead")} />
      <div className="panel toggles">
        <FeatureToggle action={setFeature} csrf={admin.csrf} feature="tokenExchange" enabled={f.tokenExchange} label={t("tokenExchange")} description={t("tokenExchangeText")} savedLabel={t("saved")} saveLabel={t("save")} />
        <FeatureToggle action={setFeature} csrf={admin.csrf} feature="impersonation" enabled={f.impersonation} label={t("impersonation")} description={t("impersonationText")} savedLabel={t("saved")} saveLabel={t("save")} />
      </div>
    </>
  );
}
