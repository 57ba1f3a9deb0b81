import { dateOf } from "@/lib/clock";
import { z } from "zod";
import type { OutboxMail } from "@/lib/store/mail-outbox";
import { enqueueMail, getOutboxMail, listOutbox } from "@/lib/store/mail-outbox";
import { recordAudit } from "@/lib/store/audit";
import { claimCooldown } from "@/lib/store/rate-limit";
import { mutateSettings, readSettings, writeSettings, type Settings } from "@/lib/store/settings";
import { getUser } from "@/lib/store/users";
import { sealSmtpPassword } from "@/lib/mail/transport";
import { sendPasswordReset } from "@/lib/login/password-reset";
import { sendEmailVerification } from "@/lib/login/email-verification";
import { accountPolicyOf } from "@/lib/login/account-policy";
import { conflict, invalidFields, notFound, tooManyRequests } from "./http";
import { named, route } from "./route";

/**
 * Mail: the SMTP server (GET/PUT/DELETE /settings/smtp, with a test mail), the outbox every mail
 * is recorded in, and an administrator's "send a password reset mail".
 */

const email = z.email().max(320);

/**
 * Seconds between two test mails of the instance. A double click, or two administrators pressing
 * the button together, sends one mail and answers the other 429 with Retry-After, rather than
 * sending twice (or making the mail server think it is being flooded).
 */
export const SMTP_TEST_COOLDOWN_SECONDS = 10;

const SmtpView = named(
  "SmtpSettings",
  z.object({
    configured: z.boolean().describe("Whether mail is sent at all; without a server every mail stays in the outbox."),
    source: z.enum(["environment", "settings"]).nullable().describe("environment: IDP_SMTP_URL is set and takes precedence over these settings."),
    host: z.string().nullable(),
    port: z.number().int().nullable(),
    security: z.enum(["tls", "starttls", "none"]).nullable(),
    user: z.string().nullable(),
    hasPassword: z.boolean(),
    fromAddress: z.string().nullable(),
    fromName: z.string().nullable(),
  }),
);

const SmtpUpdate = named(
  "SmtpSettingsUpdate",
  z.strictObject({
    host: z.string().trim().min(1).max(253),
    port: z.number().int().min(1).max(65535),
    security: z.enum(["tls", "starttls", "none"]).describe("tls: implicit TLS (usually 465); starttls: required upgrade (usually 587); none: a local relay only."),
    user: z.string().max(320).nullable().default(null),
    password: z.string().max(1024).nullable().optional().describe("Stored encrypted with the master key, never returned. Left out: keep the current one; null: none."),
    fromAddress: email,
    fromName: z.string().trim().max(200).nullable().default(null),
  }),
);

const SmtpTest = named("SmtpTest", z.strictObject({ to: email }));

const MailView = named(
  "OutboxMail",
  z.object({
    mailId: z.string(),
    to: z.string(),
    subject: z.string(),
    template: z.string(),
    userId: z.string().nullable(),
    state: z.enum(["queued", "sent", "failed", "held"]).describe("held: no mail server is configured, the outbox is where it can be read."),
    attempts: z.number().int(),
    lastError: z.string().nullable().describe("The mail server's answer to the last failed try."),
    nextAttemptAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    sentAt: z.iso.datetime().nullable(),
  }),
);
const MailDetail = named("OutboxMailDetail", MailView.extend({ text: z.string(), html: z.string() }));
const OutboxList = named("Outbox", z.object({ mails: z.array(MailView) }));
const OutboxQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.iso.datetime().optional().describe("Mails created before this time (paging on from the last one)."),
  to: z.string().max(320).optional().describe("Only mails to this address."),
});

function smtpView(s: Settings, environment: boolean): z.infer<typeof SmtpView> {
  const smtp = s.smtp;
  return {
    configured: environment || smtp !== null,
    source: environment ? "environment" : smtp ? "settings" : null,
    host: smtp?.host ?? null,
    port: smtp?.port ?? null,
    security: smtp?.security ?? null,
    user: smtp?.user ?? null,
    hasPassword: !!smtp?.passwordEnc,
    fromAddress: smtp?.fromAddress ?? null,
    fromName: smtp?.fromName ?? null,
  };
}

function mailView(m: OutboxMail): z.infer<typeof MailView> {
  return {
    mailId: m.id,
    to: m.to,
    subject: m.subject,
    template: m.template,
    userId: m.userId,
    state: m.state as z.infer<typeof MailView>["state"],
    attempts: m.attempts,
    lastError: m.lastError,
    nextAttemptAt: m.nextAttemptAt?.toISOString() ?? null,
    createdAt: m.createdAt.toISOString(),
    sentAt: m.sentAt?.toISOString() ?? null,
  };
}

export const mailRoutes = [
  route({
    method: "GET",
    path: "/settings/smtp",
    operationId: "getSmtpSettings",
    summary: "The mail server. The password is never returned.",
    tag: "mail",
    success: { status: 200, description: "The mail server settings.", schema: SmtpView },
    async handler(ctx) {
      return smtpView((await readSettings(ctx.db))!, !!ctx.inst.config.smtp);
    },
  }),
  route({
    method: "PUT",
    path: "/settings/smtp",
    operationId: "setSmtpSettings",
    summary: "Set the mail server; mails held in the outbox stay there, new ones are sent.",
    tag: "mail",
    body: SmtpUpdate,
    success: { status: 200, description: "The mail server settings now.", schema: SmtpView },
    async handler(ctx, body) {
      const updated = await mutateSettings(ctx.inst, async (tx) => {
        const current = (await readSettings(tx))!;
        const passwordEnc =
          body.password === undefined ? (current.smtp?.passwordEnc ?? null) : body.password === null || body.password === "" ? null : sealSmtpPassword(ctx.inst.masterKey, body.password);
        const s = await writeSettings(tx, {
          smtp: { host: body.host, port: body.port, security: body.security, user: body.user || null, passwordEnc, fromAddress: body.fromAddress, fromName: body.fromName || null },
        }, dateOf(ctx.inst.clock));
        await recordAudit(tx, ctx.actor, { action: "settings.smtp_updated", targetType: "instance", details: { host: body.host, port: body.port, security: body.security } });
        return s;
      });
      return smtpView(updated, !!ctx.inst.config.smtp);
    },
  }),
  route({
    method: "DELETE",
    path: "/settings/smtp",
    operationId: "deleteSmtpSettings",
    summary: "Remove the mail server: mails are kept in the outbox only.",
    tag: "mail",
    success: { status: 204, description: "Removed." },
    async handler(ctx) {
      await mutateSettings(ctx.inst, async (tx) => {
        await writeSettings(tx, { smtp: null }, dateOf(ctx.inst.clock));
        await recordAudit(tx, ctx.actor, { action: "settings.smtp_updated", targetType: "instance", details: { removed: true } });
      });
      return undefined;
    },
  }),
  route({
    method: "POST",
    path: "/settings/smtp/test",
    operationId: "sendTestMail",
    summary: `Send a test mail now and answer how it went (state sent, or failed with the server's error). One per ${SMTP_TEST_COOLDOWN_SECONDS} seconds: another call before then is answered 429 with Retry-After and sends nothing.`,
    tag: "mail",
    body: SmtpTest,
    success: { status: 200, description: "The test mail as the outbox has it.", schema: MailView },
    errors: [409, 429],
    async handler(ctx, body) {
      const settings = (await readSettings(ctx.db))!;
      if (!ctx.inst.mail.mailServer(settings)) throw conflict("No mail server is configured.", [{ path: "", code: "smtp_not_configured", message: "Set the mail server first." }]);
      const cooldown = await claimCooldown(ctx.db, "smtp-test", SMTP_TEST_COOLDOWN_SECONDS, dateOf(ctx.inst.clock));
      if (!cooldown.allowed) {
        const seconds = cooldown.retryAfterSeconds;
        throw tooManyRequests("A test mail was sent a moment ago; try again shortly.", seconds, [
          { path: "", code: "smtp_test_too_soon", message: `A test mail was sent a moment ago; try again in ${seconds} seconds.`, params: { seconds } },
        ]);
      }
      const { mail } = await ctx.inst.mail.compose("smtpTest", { address: body.to, locale: settings.defaultLocale }, {});
      const row = await enqueueMail(ctx.db, mail, "queued", dateOf(ctx.inst.clock));
      await recordAudit(ctx.db, ctx.actor, { action: "settings.smtp_tested", targetType: "instance", details: { mailId: row.id } });
      return mailView((await ctx.inst.mail.deliverNow(row.id))!);
    },
  }),
  route({
    method: "GET",
    path: "/outbox",
    operationId: "listOutbox",
    summary: "Every mail Torii wrote, newest first, with its state.",
    tag: "mail",
    query: OutboxQuery,
    success: { status: 200, description: "The outbox.", schema: OutboxList },
    async handler(ctx, _body, q) {
      const mails = await listOutbox(ctx.db, { limit: q.limit, before: q.before ? new Date(q.before) : undefined, to: q.to });
      return { mails: mails.map(mailView) };
    },
  }),
  route({
    method: "GET",
    path: "/outbox/{mailId}",
    operationId: "getOutboxMail",
    summary: "One mail with its text and HTML body.",
    tag: "mail",
    success: { status: 200, description: "The mail.", schema: MailDetail },
    errors: [404],
    async handler(ctx) {
      const m = await getOutboxMail(ctx.db, ctx.params.mailId!);
      if (!m) throw notFound("mail");
      return { ...mailView(m), text: m.text, html: m.html };
    },
  }),
  route({
    method: "POST",
    path: "/users/{userId}/password-reset",
    operationId: "sendPasswordReset",
    summary: "Mail the user a password reset link (valid once, for the configured time).",
    tag: "users",
    success: { status: 200, description: "The mail is in the outbox.", schema: z.object({ mailId: z.string() }) },
    errors: [404],
    async handler(ctx) {
      const user = await getUser(ctx.db, ctx.params.userId!);
      if (!user) throw notFound("user");
      const mailId = await sendPasswordReset(ctx.inst, user, ctx.actor, null);
      if (!mailId) throw invalidFields([{ path: "email", code: "user_no_email", message: "The user has no email address." }]);
      return { mailId };
    },
  }),
  route({
    method: "POST",
    path: "/users/{userId}/email-verification",
    operationId: "sendEmailVerification",
    summary: "Mail the user a new code and link to confirm their email address (rate-limited per user).",
    tag: "users",
    success: { status: 200, description: "The mail is in the outbox.", schema: z.object({ mailId: z.string() }) },
    errors: [404, 409],
    async handler(ctx) {
      const user = await getUser(ctx.db, ctx.params.userId!);
      if (!user) throw notFound("user");
      if (!user.email) throw invalidFields([{ path: "email", code: "user_no_email", message: "The user has no email address." }]);
      if (user.emailVerified) throw conflict("The address is verified already.", [{ path: "emailVerified", code: "email_already_verified", message: "The address is verified already." }]);
      if (accountPolicyOf((await readSettings(ctx.db))!).emailVerification === "off") {
        throw conflict("Email verification is off.", [{ path: "", code: "email_verification_off", message: "Email verification is switched off in the settings." }]);
      }
      const mailId = await sendEmailVerification(ctx.inst, user, ctx.actor, null);
      if (!mailId) throw conflict("Too many verification mails for this user; try again later.", [{ path: "", code: "verification_limit", message: "Too many verification mails for this user." }]);
      return { mailId };
    },
  }),
];
