import { getTranslations } from "next-intl/server";
import { torii } from "@torii/core/runtime";

export const dynamic = "force-dynamic";

export default async function Home() {
  const t = await getTranslations("home");
  const { issuer } = await torii();
  return (
    <main className="center-page">
      <div className="card">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true">T</span>
          <span>Torii</span>
        </div>
        <h1>{t("title")}</h1>
        <p className="lead">{t("lead")}</p>
        <ul className="list-links">
          <li>
            <a href="/ui/account">{t("account")}</a>
          </li>
          <li>
            <a href="/ui/console">{t("console")}</a>
          </li>
          <li>
            <a href="/.well-known/openid-configuration">{t("discovery")}</a>
          </li>
          <li>
            <a href="/oauth/v2/keys">{t("keys")}</a>
          </li>
          <li>
            <a href="/management/v1/openapi.json">{t("api")}</a>
          </li>
        </ul>
        <p className="footer-note">
          {t("issuer")}: <code>{issuer}</code>
        </p>
      </div>
    </main>
  );
}
