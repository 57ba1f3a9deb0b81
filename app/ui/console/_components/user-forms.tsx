import { getTranslations } from "next-intl/server";
import { createUser, updateUser } from "@/app/_server/console-actions";
import { ROLES } from "@torii/core/store/users";
import { Checkbox, Checks, ConsoleForm, Field, Hidden } from "./form";
import { Badge } from "./ui";

export type { UserData } from "./api-types";
import type { UserData } from "./api-types";

/** The role check boxes, one per role in ROLES, so that a new role needs only its texts. */
export async function RoleChecks({ defaultValues }: { defaultValues?: string[] }) {
  const t = await getTranslations("console.users");
  return (
    <Checks
      name="roles"
      legend={t("roles")}
      defaultValues={defaultValues}
      options={ROLES.map((r) => ({ value: r, label: t(`role.${r}`), hint: t(`roleHint.${r}`) }))}
    />
  );
}

/** A badge per role of a user; a role this version does not know is shown by its name. */
export async function RoleBadges({ roles }: { roles: string[] }) {
  const t = await getTranslations("console.users");
  const known = ROLES as readonly string[];
  return roles.map((r) => (
    <Badge key={r} tone="brand">
      {known.includes(r) ? t(`role.${r}`) : r}
    </Badge>
  ));
}

/** Profile fields of a human or machine user by their API names; on create also password and roles. */
export async function UserForm({ csrf, type, user }: { csrf: string; type: "human" | "machine"; user?: UserData }) {
  const t = await getTranslations("console.users");
  const create = !user;
  // The API's user is one of two shapes (lib/management/users.ts UserView), told apart by type.
  const machine = user?.type === "machine" ? user : undefined;
  const human = user?.type === "human" ? user : undefined;
  return (
    <ConsoleForm action={create ? createUser : updateUser} csrf={csrf} submitLabel={create ? t("create") : t("save")} hideOnSuccess={create}>
      <Hidden name="type" value={type} />
      {user ? <Hidden name="userId" value={user.id} /> : null}
      <Field name="username" label={t("username")} required defaultValue={user?.username} autoComplete="off" />
      {type === "machine" ? (
        <>
          <Field name="name" label={t("displayName")} defaultValue={machine?.name} />
          <Field name="description" label={t("description")} multiline defaultValue={machine?.description} />
        </>
      ) : (
        <>
          <div className="field-row">
            <Field name="givenName" label={t("givenName")} defaultValue={human?.givenName} autoComplete="off" />
            <Field name="familyName" label={t("familyName")} defaultValue={human?.familyName} autoComplete="off" />
          </div>
          <div className="field-row">
            <Field name="email" type="email" label={t("email")} defaultValue={human?.email} />
            <Field name="nickname" label={t("nickname")} defaultValue={human?.nickname} />
          </div>
          <Checkbox name="emailVerified" label={t("emailVerified")} defaultChecked={human?.emailVerified} />
          <div className="field-row">
            <Field name="phone" type="tel" label={t("phone")} defaultValue={human?.phone} />
            <Field name="locale" label={t("locale")} defaultValue={human?.locale} placeholder="en" />
          </div>
          <Checkbox name="phoneVerified" label={t("phoneVerified")} defaultChecked={human?.phoneVerified} />
          <fieldset className="form-section">
            <legend>{t("address")}</legend>
            <Field name="address.streetAddress" label={t("street")} defaultValue={human?.address?.streetAddress} />
            <div className="field-row three">
              <Field name="address.postalCode" label={t("postalCode")} defaultValue={human?.address?.postalCode} />
              <Field name="address.locality" label={t("locality")} defaultValue={human?.address?.locality} />
              <Field name="address.region" label={t("region")} defaultValue={human?.address?.region} />
            </div>
            <Field name="address.country" label={t("country")} defaultValue={human?.address?.country} />
          </fieldset>
          {create ? <Field name="password" type="password" label={t("initialPassword")} hint={t("initialPasswordHint")} autoComplete="new-password" /> : null}
        </>
      )}
      {create ? <RoleChecks /> : null}
    </ConsoleForm>
  );
}
