import { getTranslations } from "next-intl/server";
import { createUser, updateUser } from "@/app/_server/console-actions";
import { ROLES } from "@torii/core/store/users";
import { Checkbox, Checks, ConsoleForm, Field, Hidden } from "./form";
import { Badge } from "./ui";

export type UserData = {
  id: string;
  type: "human" | "machine";
  username: string;
  loginName: string;
  roles: string[];
  locked: boolean;
  createdAt: string;
  email?: string | null;
  emailVerified?: boolean;
  givenName?: string | null;
  familyName?: string | null;
  nickname?: string | null;
  locale?: string | null;
  phone?: string | null;
  phoneVerified?: boolean;
  address?: Record<string, string | null> | null;
  name?: string | null;
  description?: string | null;
};

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
  return (
    <ConsoleForm action={create ? createUser : updateUser} csrf={csrf} submitLabel={create ? t("create") : t("save")} hideOnSuccess={create}>
      <Hidden name="type" value={type} />
      {user ? <Hidden name="userId" value={user.id} /> : null}
      <Field name="username" label={t("username")} required defaultValue={user?.username} autoComplete="off" />
      {type === "machine" ? (
        <>
          <Field name="name" label={t("displayName")} defaultValue={user?.name} />
          <Field name="description" label={t("description")} multiline defaultValue={user?.description} />
        </>
      ) : (
        <>
          <div className="field-row">
            <Field name="givenName" label={t("givenName")} defaultValue={user?.givenName} autoComplete="off" />
            <Field name="familyName" label={t("familyName")} defaultValue={user?.familyName} autoComplete="off" />
          </div>
          <div className="field-row">
            <Field name="email" type="email" label={t("email")} defaultValue={user?.email} />
            <Field name="nickname" label={t("nickname")} defaultValue={user?.nickname} />
          </div>
          <Checkbox name="emailVerified" label={t("emailVerified")} defaultChecked={user?.emailVerified} />
          <div className="field-row">
            <Field name="phone" type="tel" label={t("phone")} defaultValue={user?.phone} />
            <Field name="locale" label={t("locale")} defaultValue={user?.locale} placeholder="en" />
          </div>
          <Checkbox name="phoneVerified" label={t("phoneVerified")} defaultChecked={user?.phoneVerified} />
          <fieldset className="form-section">
            <legend>{t("address")}</legend>
            <Field name="address.streetAddress" label={t("street")} defaultValue={user?.address?.streetAddress} />
            <div className="field-row three">
              <Field name="address.postalCode" label={t("postalCode")} defaultValue={user?.address?.postalCode} />
              <Field name="address.locality" label={t("locality")} defaultValue={user?.address?.locality} />
              <Field name="address.region" label={t("region")} defaultValue={user?.address?.region} />
            </div>
            <Field name="address.country" label={t("country")} defaultValue={user?.address?.country} />
          </fieldset>
          {create ? <Field name="password" type="password" label={t("initialPassword")} hint={t("initialPasswordHint")} autoComplete="new-password" /> : null}
        </>
      )}
      {create ? <RoleChecks /> : null}
    </ConsoleForm>
  );
}
