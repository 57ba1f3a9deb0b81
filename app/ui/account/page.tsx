import { hasMessage } from "@torii/core/i18n/messages";
import { getTranslations } from "next-intl/server";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { torii } from "@torii/core/runtime";
import { ACCOUNT_APP, ACCOUNT_PATH } from "@torii/core/account/app";
import { appAccess } from "@torii/core/first-party/app-session";
import { accountOverview } from "@torii/core/account/overview";
import { RECOVERY_CODES_COOKIE, recoveryCodesFromCookie } from "@torii/core/account/handlers";
import { userAgentCookieName } from "@torii/core/session/user-agent";
import { getSettings } from "@torii/core/store/settings";
import { LOCALES } from "@torii/core/i18n/locales";
import { knownPolicyViolations } from "@torii/core/passwords";
import { BrandMark } from "@/app/ui/components/brand-mark";
import { PasskeyForm } from "@/app/ui/components/passkey-form";
import "./account.css";

export const dynamic = "force-dynamic";

type SearchParams = Promise<Record<string, string | string[] | undefined>>;
const one = (v: string | string[] | undefined) => (typeof v === "string" ? v : undefined);
const when = (d: Date | null) => (d ? `${d.toISOString().slice(0, 16).replace("T", " ")} UTC` : "—");

/** The `amr` values a session can carry that the page names (messages `account.sessions.method`). */
const NAMED_AMR = ["pwd", "otp", "hwk", "swk"] as const;
const isNamedAmr = (m: string): m is (typeof NAMED_AMR)[number] => (NAMED_AMR as readonly string[]).includes(m);

/**
 * The account page: a signed-in person's own profile, address, password, second factors,
 * sessions, applications and recent security events. Every form is a plain POST to
 * /ui/account/submit/{action} (lib/account/handlers.ts) and comes back here with the outcome.
 */
export default async function AccountPage({ searchParams }: { searchParams: SearchParams }) {
  const sp = await searchParams;
  const inst = await torii();
  const jar = await cookies();
  const access = await appAccess(inst, ACCOUNT_APP, { app: jar.get(ACCOUNT_APP.cookie)?.value, userAgent: jar.get(userAgentCookieName(inst.config.issuer))?.value });
  if (!access) redirect(`${ACCOUNT_PATH}/signin?returnTo=${encodeURIComponent(ACCOUNT_PATH)}`);
  const t = await getTranslations("account");
  // A session's browser and system (lib/session/device.ts), "unknown" for what its User-Agent does not tell.
  const deviceLabel = ({ browser, os }: { browser: string | null; os: string | null }) =>
    browser && os ? t("sessions.device", { browser, os }) : browser ? browser : os ? t("sessions.someBrowserOn", { os }) : t("sessions.unknownDevice");
  const ta = await getTranslations("console.auditEvents");
  const tp = await getTranslations("login.policy");
  const settings = await getSettings(inst);
  const add = one(sp.add);
  const o = await accountOverview(inst, access, { add: add === "authenticator" || add === "passkey" ? add : null });
  const codes = recoveryCodesFromCookie(inst.masterKey, access.user.id, jar.get(RECOVERY_CODES_COOKIE)?.value, inst.clock.now());
  const done = one(sp.done);
  const error = one(sp.error);
  const section = one(sp.section);
  const violations = knownPolicyViolations((one(sp.violations) ?? "").split(","));
  const user = o.user;
  const csrf = <input type="hidden" name="csrf" value={access.csrf} />;
  const action = (name: string) => `${ACCOUNT_PATH}/submit/${name}`;
  const notice = (here: string) =>
    section === here && done ? (
      <div className="alert alert-ok" role="status">
        {hasMessage(t, `done.${done}`) ? t(`done.${done}`) : done}
      </div>
    ) : section === here && error ? (
      <div className="alert alert-error" role="alert">
        {hasMessage(t, `errors.${error}`) ? t(`errors.${error}`) : t("errors.serverError")}
        {violations.length ? (
          <ul>
            {violations.map((v) => (
              <li key={v}>{tp(v, { min: settings.passwordPolicy.minLength })}</li>
            ))}
          </ul>
        ) : null}
      </div>
    ) : null;
  // How a session signed in, in words (its RFC 8176 `amr` values; `mfa` only says there were two).
  const methodsOf = (amr: readonly string[]) =>
    [...new Set(amr.filter(isNamedAmr).map((m) => t(`sessions.method.${m}`)))].join(", ");
  const reauthFor = (returnTo: string) => `${ACCOUNT_PATH}/signin?reauth=1&returnTo=${encodeURIComponent(returnTo)}`;
  const reauth = reauthFor(`${ACCOUNT_PATH}?add=authenticator`);
  const name = [user.givenName, user.familyName].filter(Boolean).join(" ") || user.username;
  const product = settings.branding.productName || "Torii";
  const eventSentence = (e: (typeof o.events)[number]) => {
    const key = e.action.replace(/\./g, "_");
    const message = (ta.has(key as never) ? ta.raw(key as never) : ta.raw("fallback")) as string;
    const app = (e.clientId && o.clientNames[e.clientId]) || t("events.anApplication");
    const actor = e.actorId === user.id ? user.username : e.actorType === "system" ? product : t("events.administrator");
    const target = e.targetId === user.id ? user.username : t("events.something");
    return message.replace(/\{(actor|target|client|user|action)\}/g, (_, p: string) => ({ actor, target, client: app, user: user.username, action: e.action })[p] ?? "");
  };

  return (
    <main className="account-page">
      <header className="account-header">
        <div className="brand">
          <BrandMark settings={settings} height={28} />
          <span>{product}</span>
        </div>
        <form method="post" action={`${ACCOUNT_PATH}/signout`}>
          {csrf}
          <button type="submit" className="btn btn-secondary btn-small">
            {t("signOut")}
          </button>
        </form>
      </header>
      <h1>{t("title")}</h1>
      <p className="lead">{t("lead", { name })}</p>
      {error && !section ? (
        <div className="alert alert-error" role="alert">
          {hasMessage(t, `errors.${error}`) ? t(`errors.${error}`) : t("errors.serverError")}
        </div>
      ) : null}

      {codes ? (
        <section className="card account-section codes-card" id="recovery-codes" aria-labelledby="codes-title">
          <h2 id="codes-title">{t("codes.title")}</h2>
          <p className="muted">{t("codes.lead")}</p>
          <ul className="recovery-codes" data-testid="recovery-codes">
            {codes.map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ul>
          <form method="post" action={action("codes-saved")}>
            {csrf}
            <button type="submit" className="btn btn-primary">
              {t("codes.saved")}
            </button>
          </form>
        </section>
      ) : null}

      <section className="card account-section" id="profile" aria-labelledby="profile-title">
        <h2 id="profile-title">{t("profile.title")}</h2>
        {notice("profile")}
        <form method="post" action={action("profile")}>
          {csrf}
          <div className="field-row">
            <div className="field">
              <label htmlFor="givenName">{t("profile.givenName")}</label>
              <input id="givenName" name="givenName" autoComplete="given-name" maxLength={200} defaultValue={user.givenName ?? ""} />
            </div>
            <div className="field">
              <label htmlFor="familyName">{t("profile.familyName")}</label>
              <input id="familyName" name="familyName" autoComplete="family-name" maxLength={200} defaultValue={user.familyName ?? ""} />
            </div>
          </div>
          <div className="field">
            <label htmlFor="locale">{t("profile.locale")}</label>
            <select id="locale" name="locale" defaultValue={user.locale ?? ""}>
              <option value="">{t("profile.localeDefault")}</option>
              {LOCALES.map((l) => (
                <option key={l} value={l}>
                  {t(`profile.locales.${l}`)}
                </option>
              ))}
            </select>
          </div>
          <p className="hint">{t("profile.username", { username: user.username })}</p>
          <button type="submit" className="btn btn-primary">
            {t("profile.save")}
          </button>
        </form>
      </section>

      <section className="card account-section" id="email" aria-labelledby="email-title">
        <h2 id="email-title">{t("email.title")}</h2>
        {notice("email")}
        <p data-testid="email-state">
          {user.email ? (
            <>
              <strong>{user.email}</strong>{" "}
              <span className={`badge ${user.emailVerified ? "badge-ok" : ""}`}>{user.emailVerified ? t("email.verified") : t("email.unverified")}</span>
            </>
          ) : (
            t("email.none")
          )}
        </p>
        {user.email && !user.emailVerified && o.emailVerification !== "off" ? (
          <>
            <form method="post" action={action("confirm-email")} data-testid="email-confirm">
              {csrf}
              <div className="field">
                <label htmlFor="email-code">{t("email.code")}</label>
                <input id="email-code" name="code" type="text" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required />
              </div>
              <button type="submit" className="btn btn-secondary">
                {t("email.confirm")}
              </button>
            </form>
            <form method="post" action={action("verify-email")} className="inline-form">
              {csrf}
              <button type="submit" className="btn btn-link">
                {t("email.resend")}
              </button>
            </form>
          </>
        ) : null}
        {o.recentSignIn ? (
          <form method="post" action={action("email")}>
            {csrf}
            <div className="field">
              <label htmlFor="new-email">{t("email.new")}</label>
              <input id="new-email" name="email" type="email" autoComplete="email" maxLength={320} required />
              {o.emailVerification !== "off" ? <p className="hint">{t("email.newHint")}</p> : null}
            </div>
            <button type="submit" className="btn btn-primary">
              {t("email.change")}
            </button>
          </form>
        ) : (
          <p className="hint" data-testid="email-sign-in-again">
            {t("email.signInAgain")} <a href={reauthFor(ACCOUNT_PATH)}>{t("factors.signInAgainLink")}</a>
          </p>
        )}
      </section>

      <section className="card account-section" id="password" aria-labelledby="password-title">
        <h2 id="password-title">{t("password.title")}</h2>
        {notice("password")}
        <form method="post" action={action("password")}>
          {csrf}
          <input type="text" name="username" autoComplete="username" value={user.username} readOnly hidden />
          <div className="field">
            <label htmlFor="current">{t("password.current")}</label>
            <input id="current" name="current" type="password" autoComplete="current-password" required />
          </div>
          <div className="field-row">
            <div className="field">
              <label htmlFor="new-password">{t("password.new")}</label>
              <input id="new-password" name="password" type="password" autoComplete="new-password" required />
            </div>
            <div className="field">
              <label htmlFor="confirm">{t("password.confirm")}</label>
              <input id="confirm" name="confirm" type="password" autoComplete="new-password" required />
            </div>
          </div>
          <p className="hint">{t("password.hint")}</p>
          <button type="submit" className="btn btn-primary">
            {t("password.change")}
          </button>
        </form>
      </section>

      {o.mfa !== "off" ? (
        <section className="card account-section" id="factors" aria-labelledby="factors-title">
          <h2 id="factors-title">{t("factors.title")}</h2>
          {notice("factors")}
          <p className="muted">{o.mfa === "required" ? t("factors.leadRequired") : t("factors.lead")}</p>
          {o.factors.length ? (
            <ul className="account-list" data-testid="factor-list">
              {o.factors.map((f) => (
                <li key={f.id}>
                  <div>
                    <strong>{f.name}</strong> <span className="badge">{t(`factors.types.${f.type}`)}</span>
                    <div className="hint">{t("factors.added", { added: when(f.createdAt), used: when(f.lastUsedAt) })}</div>
                  </div>
                  {o.recentSignIn ? (
                    <form method="post" action={action("remove-factor")}>
                      {csrf}
                      <input type="hidden" name="factorId" value={f.id} />
                      <button type="submit" className="btn btn-secondary btn-small">
                        {t("factors.remove", { name: f.name })}
                      </button>
                    </form>
                  ) : null}
                </li>
              ))}
            </ul>
          ) : (
            <p>{t("factors.none")}</p>
          )}
          {!o.recentSignIn ? (
            <p className="hint">
              {t("factors.signInAgain")} <a href={reauth}>{t("factors.signInAgainLink")}</a>
            </p>
          ) : o.enrolment ? (
            <div className="enrol" data-testid="enrol">
              <h3>{t("factors.addTitle")}</h3>
              <p>{t("factors.scan")}</p>
              <div className="qr-code" role="img" aria-label={t("factors.qrLabel")} dangerouslySetInnerHTML={{ __html: o.enrolment.qrSvg }} />
              <p className="muted">{t("factors.manual")}</p>
              <p className="secret-key" data-testid="totp-secret">
                {o.enrolment.secret}
              </p>
              <form method="post" action={action("add-authenticator")}>
                {csrf}
                <input type="hidden" name="factorId" value={o.enrolment.factorId} />
                <div className="field-row">
                  <div className="field">
                    <label htmlFor="factor-name">{t("factors.name")}</label>
                    <input id="factor-name" name="name" maxLength={64} placeholder={t("factors.namePlaceholder")} />
                  </div>
                  <div className="field">
                    <label htmlFor="factor-code">{t("factors.code")}</label>
                    <input id="factor-code" name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]{6,7}" maxLength={7} required />
                  </div>
                </div>
                <button type="submit" className="btn btn-primary">
                  {t("factors.confirm")}
                </button>
              </form>
            </div>
          ) : o.passkeyRegistration ? (
            <div className="enrol" data-testid="passkey-enrol">
              <h3>{t("factors.passkeyTitle")}</h3>
              <p>{t("factors.passkeyLead")}</p>
              <PasskeyForm
                action={action("add-passkey")}
                fields={{ csrf: access.csrf, factorId: o.passkeyRegistration.factorId }}
                options={o.passkeyRegistration.options}
                mode="register"
                label={t("factors.passkeyCreate")}
                failed={t("errors.passkeyFailed")}
                secondary={false}
              >
                <div className="field">
                  <label htmlFor="passkey-name">{t("factors.passkeyName")}</label>
                  <input id="passkey-name" name="name" maxLength={64} placeholder={t("factors.passkeyNamePlaceholder")} />
                </div>
              </PasskeyForm>
              <noscript>
                <p className="hint">{t("factors.passkeyNeedsScript")}</p>
              </noscript>
            </div>
          ) : (
            <p className="factor-actions">
              <a className="btn btn-secondary" href={`${ACCOUNT_PATH}?add=authenticator#factors`}>
                {t("factors.add")}
              </a>
              <a className="btn btn-secondary" href={`${ACCOUNT_PATH}?add=passkey#factors`}>
                {t("factors.addPasskey")}
              </a>
            </p>
          )}
          {o.factors.length ? (
            <div className="recovery">
              <h3>{t("factors.recoveryTitle")}</h3>
              <p className="hint" data-testid="recovery-left">
                {t("factors.recoveryLeft", { count: o.recoveryCodesLeft })}
              </p>
              {o.recentSignIn ? (
                <form method="post" action={action("recovery-codes")}>
                  {csrf}
                  <button type="submit" className="btn btn-secondary">
                    {t("factors.recoveryNew")}
                  </button>
                </form>
              ) : null}
            </div>
          ) : null}
        </section>
      ) : null}

      <section className="card account-section" id="sessions" aria-labelledby="sessions-title">
        <h2 id="sessions-title">{t("sessions.title")}</h2>
        {notice("sessions")}
        <ul className="account-list" data-testid="session-list">
          {o.sessions.map((s) => (
            <li key={s.id}>
              <div>
                <strong>{s.current ? t("sessions.current") : t("sessions.other")}</strong>
                {/* Sessions signed in before their origin was kept have neither, and no such line. */}
                {s.userAgent !== null || s.ip !== null ? (
                  <div className="hint" data-testid="session-device">
                    {[deviceLabel(s.device), s.ip ? t("sessions.address", { ip: s.ip }) : null].filter(Boolean).join(" · ")}
                  </div>
                ) : null}
                <div className="hint">{t("sessions.times", { started: when(s.createdAt), active: when(s.lastActiveAt), methods: methodsOf(s.amr) || "—" })}</div>
              </div>
              <form method="post" action={action("end-session")}>
                {csrf}
                <input type="hidden" name="sessionId" value={s.id} />
                <button type="submit" className="btn btn-secondary btn-small">
                  {t("sessions.end")}
                </button>
              </form>
            </li>
          ))}
        </ul>
      </section>

      <section className="card account-section" id="apps" aria-labelledby="apps-title">
        <h2 id="apps-title">{t("apps.title")}</h2>
        {notice("apps")}
        {o.apps.length ? (
          <ul className="account-list" data-testid="app-list">
            {o.apps.map((a) => (
              <li key={a.clientId}>
                <div>
                  <strong>{a.clientName}</strong>
                  <div className="hint">
                    {a.lastGrantAt ? t("apps.lastSignIn", { at: when(a.lastGrantAt) }) : null}
                    {a.consentScopes ? ` ${t("apps.allowed", { scopes: a.consentScopes.join(", ") })}` : null}
                  </div>
                </div>
                <form method="post" action={action("revoke-app")}>
                  {csrf}
                  <input type="hidden" name="clientId" value={a.clientId} />
                  <button type="submit" className="btn btn-secondary btn-small">
                    {t("apps.revoke", { name: a.clientName })}
                  </button>
                </form>
              </li>
            ))}
          </ul>
        ) : (
          <p>{t("apps.none")}</p>
        )}
      </section>

      <section className="card account-section" id="events" aria-labelledby="events-title">
        <h2 id="events-title">{t("events.title")}</h2>
        {o.events.length ? (
          <ul className="account-list events" data-testid="event-list">
            {o.events.map((e) => (
              <li key={e.id}>
                <span>{eventSentence(e)}</span>
                <time className="hint" dateTime={e.occurredAt.toISOString()}>
                  {when(e.occurredAt)}
                </time>
              </li>
            ))}
          </ul>
        ) : (
          <p>{t("events.none")}</p>
        )}
      </section>
    </main>
  );
}
