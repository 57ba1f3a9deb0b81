import { getTranslations } from "next-intl/server";
import { ACCOUNT_PATH } from "@torii/core/account/app";
import { NoticeCard } from "@/app/ui/components/notice-card";

/**
 * What an address that names nothing shows, and a console page whose user, application, API or
 * mail is gone (`notFound()`): a page in the browser's language and the brand's look, answered
 * with 404, instead of Next's English default. It links to the account page, where a person who
 * followed a stale link can go on.
 */
export default async function NotFound() {
  const t = await getTranslations("notFound");
  return <NoticeCard title={t("title")} text={t("lead")} action={t("account")} href={ACCOUNT_PATH} />;
}
