import { getTranslations } from "next-intl/server";
import { notFound } from "next/navigation";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { Badge, FormatDate, PageHeader, Section } from "../../../_components/ui";

export const dynamic = "force-dynamic";

/** One mail as the recipient sees it: the HTML part in a sandboxed frame (no scripts, no same origin), and the text part. */
export default async function OutboxMailPage({ params }: { params: Promise<{ mailId: string }> }) {
  const { mailId } = await params;
  const admin = await requireAdmin(`${CONSOLE_PATH}/outbox/${encodeURIComponent(mailId)}`);
  const t = await getTranslations("console.outbox");
  const mail = await read(admin.user, "getOutboxMail", { params: { mailId } });
  if (!mail) notFound();
  return (
    <>
      <PageHeader
        title={mail.subject}
        back={{ href: `${CONSOLE_PATH}/outbox`, label: t("title") }}
        lead={
          <span className="id-line">
            {t("to")}: <span>{mail.to}</span>
            <Badge>{t(`states.${mail.state}`)}</Badge>
            <span className="muted small">
              <FormatDate iso={mail.createdAt} />
            </span>
          </span>
        }
      />
      {mail.lastError ? (
        <div className="alert alert-error" role="alert">
          {mail.lastError}
        </div>
      ) : null}
      <Section title={t("html")} id="html">
        <iframe title={t("html")} sandbox="" srcDoc={mail.html} className="mail-frame" />
      </Section>
      <Section title={t("text")} id="text">
        <pre className="mail-text" data-testid="mail-text">
          {mail.text}
        </pre>
      </Section>
    </>
  );
}
