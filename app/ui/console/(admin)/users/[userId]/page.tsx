import { getTranslations } from "next-intl/server";
import { notFound } from "next/navigation";
import {
  addMachineKey,
  createPat,
  mailEmailVerification,
  mailPasswordReset,
  deleteUser,
  liftUserLockout,
  removeMachineKey,
  removeUserFactor,
  resetUserFactors,
  revokePat,
  setUserAccess,
  setUserPassword,
  withdrawConsent,
} from "@/app/_server/console-actions";
import { CONSOLE_PATH } from "@torii/core/console/client";
import { read, requireAdmin } from "@/app/_server/console-next";
import { Checkbox, ConsoleForm, Field, Hidden } from "../../../_components/form";
import { DangerZone } from "../../../_components/danger-zone";
import { Badge, DataTable, FormatDate, PageHeader, Section } from "../../../_components/ui";
import { RoleBadges, RoleChecks, UserForm } from "../../../_components/user-forms";
import { ApiRolesForm } from "../../../_components/api-roles-form";

export const dynamic = "force-dynamic";


export default async function UserPage({ params }: { params: Promise<{ userId: string }> }) {
  const { userId } = await params;
  const path = `/users/${encodeURIComponent(userId)}`;
  const admin = await requireAdmin(CONSOLE_PATH + path);
  const t = await getTranslations("console.users");
  const user = await read(admin.user, "getUser", { params: { userId } });
  if (!user) notFound();
  const [keys, pats, lockout, consents, apis, apiRoles, factors] = await Promise.all([
    user.type === "machine" ? read(admin.user, "listMachineKeys", { params: { userId } }) : null,
    read(admin.user, "listPats", { params: { userId } }),
    user.type === "human" ? read(admin.user, "getUserLockout", { params: { userId } }) : null,
    user.type === "human" ? read(admin.user, "listConsents", { params: { userId } }) : null,
    read(admin.user, "listApis"),
    read(admin.user, "getUserRoles", { params: { userId } }),
    user.type === "human" ? read(admin.user, "listUserFactors", { params: { userId } }) : null,
  ]);
  const apiList = apis?.apis ?? [];
  const display = user.type === "machine" ? user.name : [user.givenName, user.familyName].filter(Boolean).join(" ");
  return (
    <>
      <PageHeader
        title={user.username}
        back={{ href: `${CONSOLE_PATH}/users`, label: t("title") }}
        lead={
          <span className="id-line">
            {display ? <span>{display}</span> : null}
            <code className="id">{user.loginName}</code>
            <Badge>{t(`type.${user.type}`)}</Badge>
            {user.locked ? <Badge tone="danger">{t("locked")}</Badge> : <Badge tone="ok">{t("active")}</Badge>}
            <RoleBadges roles={user.roles} />
          </span>
        }
      />
      <div className="two-col">
        <Section title={t("profile")} id="profile">
          <UserForm csrf={admin.csrf} type={user.type} user={user} />
        </Section>
        <div className="stack-lg">
          <Section title={t("access")} description={t("accessText")} id="access">
            <ConsoleForm action={setUserAccess} csrf={admin.csrf} submitLabel={t("saveRoles")}>
              <Hidden name="userId" value={user.id} />
              <Hidden name="rolesForm" value="1" />
              <RoleChecks defaultValues={user.roles} />
            </ConsoleForm>
            <hr className="divider" />
            <p className="hint">{user.locked ? t("lockedText") : t("unlockedText")}</p>
            <ConsoleForm action={setUserAccess} csrf={admin.csrf} submitLabel={user.locked ? t("unlock") : t("lock")} inline danger={!user.locked}>
              <Hidden name="userId" value={user.id} />
              <Hidden name="locked" value={user.locked ? "false" : "true"} />
            </ConsoleForm>
          </Section>
          {lockout ? (
            <Section title={t("lockout")} id="lockout">
              {lockout.locked && lockout.lockedUntil ? (
                <>
                  <p className="hint" data-testid="lockout-state">
                    {t("lockoutActive", { until: `${lockout.lockedUntil.slice(0, 16).replace("T", " ")} UTC` })}
                  </p>
                  <ConsoleForm action={liftUserLockout} csrf={admin.csrf} submitLabel={t("liftLockout")} inline>
                    <Hidden name="userId" value={user.id} />
                  </ConsoleForm>
                </>
              ) : (
                <p className="hint" data-testid="lockout-state">
                  {t("lockoutNone", { count: lockout.recentFailures })}
                </p>
              )}
            </Section>
          ) : null}
          {user.type === "human" ? (
            <Section title={t("password")} description={t("passwordText")} id="password">
              <ConsoleForm action={setUserPassword} csrf={admin.csrf} submitLabel={t("setPassword")}>
                <Hidden name="userId" value={user.id} />
                <Field name="password" type="password" label={t("newPassword")} autoComplete="new-password" required />
                <Checkbox name="passwordChangeRequired" label={t("temporaryPassword")} hint={t("temporaryPasswordHint")} />
              </ConsoleForm>
              <hr className="divider" />
              <p className="hint" data-testid="password-change-state">
                {user.passwordChangeRequired ? t("passwordChangeRequiredText") : t("passwordChangeNotRequiredText")}
              </p>
              <ConsoleForm
                action={setUserAccess}
                csrf={admin.csrf}
                submitLabel={user.passwordChangeRequired ? t("waivePasswordChange") : t("requirePasswordChange")}
                inline
              >
                <Hidden name="userId" value={user.id} />
                <Hidden name="passwordChangeRequired" value={user.passwordChangeRequired ? "false" : "true"} />
              </ConsoleForm>
              {user.email && !user.emailVerified ? (
                <>
                  <hr className="divider" />
                  <p className="hint">{t("verifyMailText", { email: user.email })}</p>
                  <ConsoleForm action={mailEmailVerification} csrf={admin.csrf} submitLabel={t("verifyMail")} inline>
                    <Hidden name="userId" value={user.id} />
                  </ConsoleForm>
                </>
              ) : null}
              {user.email ? (
                <>
                  <hr className="divider" />
                  <p className="hint">{t("resetMailText", { email: user.email })}</p>
                  <ConsoleForm action={mailPasswordReset} csrf={admin.csrf} submitLabel={t("resetMail")} inline>
                    <Hidden name="userId" value={user.id} />
                  </ConsoleForm>
                </>
              ) : null}
            </Section>
          ) : null}
        </div>
      </div>
      {keys ? (
        <Section title={t("keys")} description={t("keysText")} id="keys">
          {keys.keys.length ? (
            <DataTable columns={[t("keyId"), t("alg"), t("createdAt"), t("expiresAt"), { label: t("actions"), hidden: true }]}>
              {keys.keys.map((k) => (
                <tr key={k.keyId}>
                  <td>
                    <code className="id">{k.keyId}</code>
                  </td>
                  <td>{k.alg}</td>
                  <td className="nowrap small">
                    <FormatDate iso={k.createdAt} />
                  </td>
                  <td className="nowrap small">
                    <FormatDate iso={k.expiresAt} />
                  </td>
                  <td className="cell-actions">
                    <ConsoleForm action={removeMachineKey} csrf={admin.csrf} submitLabel={t("remove")} inline>
                      <Hidden name="userId" value={user.id} />
                      <Hidden name="keyId" value={k.keyId} />
                    </ConsoleForm>
                  </td>
                </tr>
              ))}
            </DataTable>
          ) : (
            <p className="panel-empty">{t("noKeys")}</p>
          )}
          <div className="split">
            <div>
              <h3>{t("generateKey")}</h3>
              <p className="hint">{t("generateKeyText")}</p>
              <ConsoleForm action={addMachineKey} csrf={admin.csrf} submitLabel={t("generate")}>
                <Hidden name="userId" value={user.id} />
              </ConsoleForm>
            </div>
            <div>
              <h3>{t("addKey")}</h3>
              <ConsoleForm action={addMachineKey} csrf={admin.csrf} submitLabel={t("addKeySubmit")}>
                <Hidden name="userId" value={user.id} />
                <Field name="publicKey" label={t("publicKey")} multiline rows={5} mono hint={t("publicKeyHint")} placeholder='{"kty": "RSA", "n": "...", "e": "AQAB"}' />
              </ConsoleForm>
            </div>
          </div>
        </Section>
      ) : null}
      {apiList.length ? (
        <Section title={t("apiRoles")} description={t("apiRolesText")} id="api-roles">
          <ApiRolesForm csrf={admin.csrf} holder={{ userId: user.id }} apis={apiList} roles={apiRoles ?? {}} />
        </Section>
      ) : null}
      {factors ? (
        <Section title={t("factors")} description={t("factorsText")} id="factors">
          {factors.factors.length ? (
            <>
              <DataTable fit columns={[t("factorName"), t("factorType"), t("factorAdded"), t("factorLastUsed"), { label: t("actions"), hidden: true }]}>
                {factors.factors.map((f) => (
                  <tr key={f.id}>
                    <td>{f.name}</td>
                    <td>{t(`factorTypes.${f.type}`)}</td>
                    <td className="small">
                      <FormatDate iso={f.createdAt} />
                    </td>
                    <td className="small">{f.lastUsedAt ? <FormatDate iso={f.lastUsedAt} /> : t("never")}</td>
                    <td className="cell-actions">
                      <ConsoleForm action={removeUserFactor} csrf={admin.csrf} submitLabel={t("factorRemove")} inline danger>
                        <Hidden name="userId" value={user.id} />
                        <Hidden name="factorId" value={f.id} />
                      </ConsoleForm>
                    </td>
                  </tr>
                ))}
              </DataTable>
              <p className="hint" data-testid="recovery-codes-left">
                {t("recoveryCodesLeft", { count: factors.recoveryCodesRemaining })}
              </p>
              <ConsoleForm action={resetUserFactors} csrf={admin.csrf} submitLabel={t("factorsReset")} inline danger>
                <Hidden name="userId" value={user.id} />
              </ConsoleForm>
            </>
          ) : (
            <p className="panel-empty">{t("noFactors")}</p>
          )}
        </Section>
      ) : null}
      {consents ? (
        <Section title={t("consents")} description={t("consentsText")} id="consents">
          {consents.consents.length ? (
            <DataTable columns={[t("consentApp"), t("consentScopes"), t("consentGranted"), { label: t("actions"), hidden: true }]}>
              {consents.consents.map((c) => (
                <tr key={c.clientId}>
                  <td>{c.clientName}</td>
                  <td className="small">
                    <code>{c.scopes.join(" ")}</code>
                    {Object.entries(c.apis).map(([api, scopes]) => (
                      <div key={api}>
                        <code>{[api, ...scopes].join(" ")}</code>
                      </div>
                    ))}
                  </td>
                  <td className="nowrap small">
                    <FormatDate iso={c.grantedAt} />
                  </td>
                  <td className="cell-actions">
                    <ConsoleForm action={withdrawConsent} csrf={admin.csrf} submitLabel={t("consentWithdraw")} inline>
                      <Hidden name="userId" value={user.id} />
                      <Hidden name="clientId" value={c.clientId} />
                    </ConsoleForm>
                  </td>
                </tr>
              ))}
            </DataTable>
          ) : (
            <p className="panel-empty">{t("noConsents")}</p>
          )}
        </Section>
      ) : null}
      <Section title={t("pats")} description={t("patsText")} id="pats">
        {pats?.pats.length ? (
          <DataTable columns={[t("patId"), t("createdAt"), t("expiresAt"), t("lastUsed"), { label: t("actions"), hidden: true }]}>
            {pats.pats.map((p) => (
              <tr key={p.id}>
                <td>
                  <code className="id">{p.id}</code>
                </td>
                <td className="nowrap small">
                  <FormatDate iso={p.createdAt} />
                </td>
                <td className="nowrap small">
                  <FormatDate iso={p.expiresAt} />
                </td>
                <td className="nowrap small">
                  <FormatDate iso={p.lastUsedAt} />
                </td>
                <td className="cell-actions">
                  <ConsoleForm action={revokePat} csrf={admin.csrf} submitLabel={t("revoke")} inline>
                    <Hidden name="userId" value={user.id} />
                    <Hidden name="patId" value={p.id} />
                  </ConsoleForm>
                </td>
              </tr>
            ))}
          </DataTable>
        ) : (
          <p className="panel-empty">{t("noPats")}</p>
        )}
        <ConsoleForm action={createPat} csrf={admin.csrf} submitLabel={t("createPat")}>
          <Hidden name="userId" value={user.id} />
          <Field name="expiresAt" type="date" label={t("patExpires")} hint={t("patExpiresHint")} />
        </ConsoleForm>
      </Section>
      <DangerZone
        texts={{ title: t("dangerTitle"), text: t("deleteText"), open: t("delete"), confirm: t("deleteConfirm", { name: user.username }), submit: t("deleteForever") }}
        action={deleteUser}
        csrf={admin.csrf}
        field={{ name: "userId", value: user.id }}
      />
    </>
  );
}
