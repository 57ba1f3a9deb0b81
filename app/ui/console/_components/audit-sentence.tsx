import { getTranslations } from "next-intl/server";
import { CONSOLE_PATH } from "@torii/core/console/client";

export type AuditEventView = {
  actorType: string;
  actorId: string | null;
  action: string;
  targetType: string | null;
  targetId: string | null;
  clientId: string | null;
  details?: Record<string, unknown> | null;
};

/** Names for the ids of a page of events: users by id, applications by client id. */
export type AuditNames = { users: Map<string, string>; clients: Map<string, string> };

/** The ids whose names a page of events needs (at most 50 users: one API call). */
export function idsToName(events: AuditEventView[]): { users: string[] } {
  const users = new Set<string>();
  for (const e of events) {
    if (e.actorType === "user" && e.actorId) users.add(e.actorId);
    if (e.targetType === "user" && e.targetId) users.add(e.targetId);
    const subject = subjectOf(e);
    if (subject) users.add(subject);
  }
  return { users: [...users].slice(0, 50) };
}

/** The user tokens were issued for: a client is the actor of a token event, the user is in its details. */
function subjectOf(e: AuditEventView): string | null {
  const id = e.details?.userId;
  return typeof id === "string" && id ? id : null;
}

/** The message key of an action: `user.signin.failed` -> `user_signin_failed`. */
const keyOf = (action: string) => action.replace(/\./g, "_");

/**
 * An audit event as a sentence in the administrator's language ("ada signed in to Shop"), with the
 * actor, the target and the application by name, each linked to its page. An id without a known
 * name (deleted since) is shown as the id; an action without a sentence as its code.
 */
export async function AuditSentence({ event, names }: { event: AuditEventView; names: AuditNames }) {
  const t = await getTranslations("console.auditEvents");
  const user = (id: string) => (
    <a href={`${CONSOLE_PATH}/users/${encodeURIComponent(id)}`} className="audit-ref">
      {names.users.get(id) ?? <code className="id">{id}</code>}
    </a>
  );
  const client = (id: string) => (
    <a href={`${CONSOLE_PATH}/applications/${encodeURIComponent(id)}`} className="audit-ref">
      {names.clients.get(id) ?? <code className="id">{id}</code>}
    </a>
  );
  const actor =
    event.actorType === "user" && event.actorId ? user(event.actorId) : event.actorType === "client" && event.actorId ? client(event.actorId) : event.actorType === "system" ? t("system") : t("someone");
  const target =
    event.targetType === "user" && event.targetId
      ? user(event.targetId)
      : event.targetType === "client" && event.targetId
        ? client(event.targetId)
        : event.targetId
          ? <code className="id">{event.targetId}</code>
          : t("someone");
  const app = event.clientId ? client(event.clientId) : t("unknownClient");
  const subject = subjectOf(event);
  const values: Record<string, React.ReactNode> = { actor, target, client: app, user: subject ? user(subject) : actor, action: <code>{event.action}</code> };
  const key = keyOf(event.action);
  // The sentences are plain text with placeholders; links go in their place (t.rich takes tags,
  // not elements, as values).
  const message = (t.has(key as never) ? t.raw(key as never) : t.raw("fallback")) as string;
  const parts = message.split(/\{(actor|target|client|user|action)\}/);
  return (
    <span className="audit-sentence">
      {parts.map((p, i) => (i % 2 ? <span key={i}>{values[p]}</span> : p))}
    </span>
  );
}
