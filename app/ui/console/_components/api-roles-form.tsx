import { getTranslations } from "next-intl/server";
import { setApiRoles } from "@/app/_server/console-actions";
import { Checks, ConsoleForm, Hidden } from "./form";
import type { ApiData, RoleMapData } from "./api-types";

/**
 * The roles a user or a client holds at each API: a group of boxes per API that defines roles.
 * Saving replaces the roles at every API shown (PUT /users|clients/{id}/roles).
 */
export async function ApiRolesForm({ csrf, holder, apis, roles }: { csrf: string; holder: { userId: string } | { clientId: string }; apis: ApiData[]; roles: RoleMapData }) {
  const t = await getTranslations("console.apis");
  const withRoles = apis.filter((a) => a.roles.length);
  if (!withRoles.length) return <p className="muted">{t("noRolesDefined")}</p>;
  return (
    <ConsoleForm action={setApiRoles} csrf={csrf} submitLabel={t("saveRoles")}>
      {"userId" in holder ? <Hidden name="userId" value={holder.userId} /> : <Hidden name="clientId" value={holder.clientId} />}
      {withRoles.map((api) => (
        <Hidden key={api.identifier} name="apiShown" value={api.identifier} />
      ))}
      <div className="field-row">
        {withRoles.map((api) => (
          <Checks
            key={api.identifier}
            name="apiRoles"
            legend={api.name}
            options={api.roles.map((r) => ({ value: `${api.identifier} ${r.key}`, label: r.name, hint: r.key }))}
            defaultValues={(roles[api.identifier] ?? []).map((k) => `${api.identifier} ${k}`)}
          />
        ))}
      </div>
    </ConsoleForm>
  );
}
