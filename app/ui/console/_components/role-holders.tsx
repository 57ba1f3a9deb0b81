import { getTranslations } from "next-intl/server";
import { assignRoleInBulk, removeRoleHolder } from "@/app/_server/console-actions";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { ConsoleForm, Field, Hidden, Radios } from "./form";
import { Badge, DataTable } from "./ui";
import type { ApiData, ApiResponse } from "./api-types";

export type HolderPage = ApiResponse<"getRoleHolders">;

/**
 * Who holds each role of an API (users and machine clients, one page per role, a remove button
 * each) and a form that gives one role to several users by login name at once.
 */
export async function RoleHolders({ csrf, api, pages, pageSize }: { csrf: string; api: ApiData; pages: Record<string, HolderPage>; pageSize: number }) {
  const t = await getTranslations("console.apis");
  const tc = await getTranslations("console.common");
  const base = `${CONSOLE_PATH}/apis/${encodeURIComponent(api.apiId)}`;
  // The other roles stay on their first page: the offset in the address is for one role.
  const link = (roleKey: string, offset: number) => `${base}${offset ? `?${new URLSearchParams({ role: roleKey, offset: String(offset) })}` : ""}#role-${encodeURIComponent(roleKey)}`;
  return (
    <>
      {api.roles.map((role) => {
        const page = pages[role.key];
        if (!page) return null;
        const { holders, total, offset } = page;
        return (
          <div key={role.key} className="role-holders" id={`role-${role.key}`}>
            <h3>
              {role.name} <code className="id">{role.key}</code>
            </h3>
            {holders.length ? (
              <DataTable columns={[t("holderName"), t("holderKind"), { label: t("remove"), hidden: true }]}>
                {holders.map((h) => (
                  <tr key={`${h.kind} ${h.id}`}>
                    <td>
                      <a className="row-link" href={`${CONSOLE_PATH}/${h.kind === "user" ? "users" : "applications"}/${encodeURIComponent(h.id)}`}>
                        {h.name}
                      </a>
                    </td>
                    <td>
                      <Badge>{t(h.kind === "user" ? "holderUser" : "holderClient")}</Badge>
                    </td>
                    <td className="cell-actions">
                      <ConsoleForm action={removeRoleHolder} csrf={csrf} submitLabel={t("remove")} inline>
                        <Hidden name="apiId" value={api.apiId} />
                        <Hidden name="roleKey" value={role.key} />
                        <Hidden name="kind" value={h.kind} />
                        <Hidden name="holderId" value={h.id} />
                      </ConsoleForm>
                    </td>
                  </tr>
                ))}
              </DataTable>
            ) : (
              <p className="panel-empty">{t("holdersEmpty")}</p>
            )}
            {total > pageSize ? (
              <div className="pager">
                <span className="muted small">{tc("range", { from: total ? offset + 1 : 0, to: offset + holders.length, total })}</span>
                <span className="pager-links">
                  {offset > 0 ? (
                    <a className="btn btn-secondary" href={link(role.key, Math.max(0, offset - pageSize))}>
                      {tc("previous")}
                    </a>
                  ) : null}
                  {offset + pageSize < total ? (
                    <a className="btn btn-secondary" href={link(role.key, offset + pageSize)}>
                      {tc("next")}
                    </a>
                  ) : null}
                </span>
              </div>
            ) : null}
          </div>
        );
      })}
      <h3>{t("bulkTitle")}</h3>
      <ConsoleForm action={assignRoleInBulk} csrf={csrf} submitLabel={t("bulkAssign")}>
        <Hidden name="apiId" value={api.apiId} />
        <Radios name="roleKey" legend={t("bulkRole")} options={api.roles.map((r) => ({ value: r.key, label: r.name }))} defaultValue={api.roles[0]!.key} />
        <Field name="usernames" label={t("bulkUsernames")} hint={t("bulkUsernamesHint")} multiline rows={5} mono />
      </ConsoleForm>
    </>
  );
}
