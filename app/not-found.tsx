import { getTranslations } from "next-intl/server";

/**
 * What an address that names nothing shows, and a console page whose user, application, API or
 * mail is gone (`notFound()`): a page in the browser's language and the brand's look, answered
 * with 404, instead of Next's English default. It links to the account page, where a person who
 * followed a stale link can go on.
 */
export default async function NotFound() {
  const t = await getTranslations("notFound");
  return (
    <main className="auth-page">
      <div className="auth-card card">
        <h1>{t("title")}</h1>
        <p className="lead">{t("lead")}</p>
        <a className="btn btn-primary" href="/ui/account">
          {t("account")}
        </a>
      </div>
    </main>
  );
}
