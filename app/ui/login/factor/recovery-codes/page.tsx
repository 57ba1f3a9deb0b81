import { getTranslations } from "next-intl/server";
import { redirect } from "next/navigation";
import { torii } from "@torii/core/runtime";
import { recoveryCodesToShow } from "@torii/core/login/factor-handlers";
import { CALLBACK_PATH, LOGIN_PATHS } from "@torii/core/login/paths";
import { AuthShell, FlowFields } from "@/app/ui/components/auth-shell";
import { loadFlow } from "../../flow";
import { FlowExpired } from "../../flow-expired";

export const dynamic = "force-dynamic";

/** The recovery codes of a user's first factor, shown once after enrolment during sign-in. */
export default async function RecoveryCodesPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const flow = await loadFlow(searchParams);
  if (!flow) return <FlowExpired />;
  const t = await getTranslations("login");
  const inst = await torii();
  const codes = recoveryCodesToShow(inst.masterKey, flow.id, flow.authRequest.formValues);
  if (!codes) redirect(`${CALLBACK_PATH}?id=${encodeURIComponent(flow.id)}`);
  return (
    <AuthShell settings={flow.settings} title={t("recoveryCodes.title")} subtitle={t("continueTo", { client: flow.client.name })}>
      <p className="muted">{t("recoveryCodes.lead")}</p>
      <ul className="recovery-codes" aria-label={t("recoveryCodes.listLabel")} data-testid="recovery-codes">
        {codes.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ul>
      <form method="post" action={LOGIN_PATHS.submitRecoveryCodes}>
        <FlowFields id={flow.id} csrf={flow.csrf} />
        <button type="submit" className="btn btn-primary">
          {t("recoveryCodes.continue")}
        </button>
      </form>
    </AuthShell>
  );
}
