import { getTranslations } from "next-intl/server";
import { CONSOLE_CLIENT_ID, CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { AuditSentence, idsToName, type AuditNames } from "../_components/audit-sentence";
import { Badge, FormatDate, PageHeader, Section } from "../_components/ui";

export const dynamic = "force-dynamic";

export default async function OverviewPage() {
  const admin = await requireAdmin(CONSOLE_PATH);
  const t = await getTranslations("console");
  const [clients, users, keys, features, audit] = await Promise.all([
    read(admin.user, "listClients"),
    read(admin.user, "listUsers", { query: { limit: 1 } }),
    read(admin.user, "listSigningKeys"),
    read(admin.user, "getFeatures"),
    read(admin.user, "listAuditEvents", { query: { limit: 6 } }),
  ]);
  const events = audit?.events ?? [];
  const userIds = idsToName(events).users;
  const named = userIds.length ? await read(admin.user, "listUsers", { query: { ids: userIds.join(","), limit: 50 } }) : null;
  const names: AuditNames = {
    users: new Map((named?.users ?? []).map((u) => [u.id, u.username])),
    clients: new Map((clients?.clients ?? []).map((c) => [c.clientId, c.name])),
  };
  const apps = (clients?.clients ?? []).filter((c) => c.clientId !== CONSOLE_CLIENT_ID).length;
  const active = keys?.keys.find((k) => k.status === "active");
  const cards = [
    { href: "/applications", label: t("nav.applications"), value: String(apps) },
    { href: "/users", label: t("nav.users"), value: String(users?.total ?? 0) },
    { href: "/keys", label: t("overview.activeKey"), value: active ? active.kid : "—", mono: true },
  ];
  return (
    <>
      <PageHeader title={t("overview.title")} lead={t("overview.lead", { name: admin.user.username })} />
      <div className="stat-grid">
        {cards.map((c) => (
          <a key={c.href} className="stat" href={CONSOLE_PATH + c.href}>
            <span className="stat-label">{c.label}</span>
            <span className={`stat-value${"mono" in c ? " mono" : ""}`}>{c.value}</span>
          </a>
        ))}
        <a className="stat" href={`${CONSOLE_PATH}/features`}>
          <span className="stat-label">{t("nav.features")}</span>
          <span className="stat-badges">
            <Badge tone={features?.tokenExchange ? "ok" : undefined}>
              {t("features.tokenExchange")}: {features?.tokenExchange ? t("common.on") : t("common.off")}
            </Badge>
            <Badge tone={features?.impersonation ? "ok" : undefined}>
              {t("features.impersonation")}: {features?.impersonation ? t("common.on") : t("common.off")}
            </Badge>
          </span>
        </a>
      </div>
      <Section title={t("overview.recent")}>
        <ul className="event-list">
          {events.map((e) => (
            <li key={e.id}>
              <AuditSentence event={e} names={names} />
              <span className="muted">
                <FormatDate iso={e.occurredAt} />
              </span>
            </li>
          ))}
        </ul>
        <p>
          <a href={`${CONSOLE_PATH}/audit`}>{t("overview.allEvents")}</a>
        </p>
      </Section>
    </>
  );
}
