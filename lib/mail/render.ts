import type { Branding } from "@/db/schema";
import { translate } from "@/lib/i18n/messages";

/**
 * The mails Torii writes, in the recipient's language: texts from the `mail` namespace of the
 * catalogs (overridable in the console like the login texts), laid out with the brand's name,
 * colour and logo. Each mail has a plain-text and an HTML part with the same content.
 */
export type MailKind = "passwordReset" | "verifyEmail" | "accountLocked" | "registrationAttempt" | "emailChanged" | "smtpTest";

export type RenderedMail = { subject: string; text: string; html: string };

export type MailContext = {
  locale: string;
  branding: Branding;
  /** Whether the instance has a logo (then the HTML shows it from `logoUrl`). */
  logoUrl: string | null;
  /** The administrator's texts of this locale (lib/i18n/overrides.ts). */
  overrides: Record<string, string>;
};

const escapeHtml = (v: string) => v.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** Paragraphs of a mail and an optional button; values fill the texts' `{placeholders}`. */
type Content = { subject: string; paragraphs: string[]; action?: { label: string; url: string }; after?: string[] };

function compose(kind: MailKind, values: Record<string, string | number>, ctx: MailContext): Content {
  const t = (key: string) => translate(ctx.locale, `mail.${key}`, values, ctx.overrides);
  if (kind === "passwordReset") {
    return {
      subject: t("passwordReset.subject"),
      paragraphs: [t("passwordReset.greeting"), t("passwordReset.body")],
      action: { label: t("passwordReset.action"), url: String(values.url) },
      after: [t("passwordReset.ignore")],
    };
  }
  if (kind === "verifyEmail") {
    return {
      subject: t("verifyEmail.subject"),
      paragraphs: [t("verifyEmail.greeting"), t("verifyEmail.body"), t("verifyEmail.code")],
      action: { label: t("verifyEmail.action"), url: String(values.url) },
      after: [t("verifyEmail.ignore")],
    };
  }
  if (kind === "accountLocked" || kind === "registrationAttempt" || kind === "emailChanged") {
    // Notices to an account's owner: what happened, and what to do about it.
    return { subject: t(`${kind}.subject`), paragraphs: [t(`${kind}.greeting`), t(`${kind}.body`)], after: [t(`${kind}.advice`)] };
  }
  return { subject: t("smtpTest.subject"), paragraphs: [t("smtpTest.body")] };
}

export function renderMail(kind: MailKind, values: Record<string, string | number>, ctx: MailContext): RenderedMail {
  const product = ctx.branding.productName || "Torii";
  const all = { product, ...values };
  const c = compose(kind, all, ctx);
  const footer = translate(ctx.locale, "mail.footer", all, ctx.overrides);
  const text = [
    ...c.paragraphs,
    ...(c.action ? [`${c.action.label}:\n${c.action.url}`] : []),
    ...(c.after ?? []),
    "--",
    footer,
  ].join("\n\n");
  const color = /^#[0-9a-fA-F]{6}$/.test(ctx.branding.primaryColor) ? ctx.branding.primaryColor : "#c2410c";
  const p = (s: string) => `<p style="margin:0 0 16px;line-height:1.5">${escapeHtml(s)}</p>`;
  const html = `<!doctype html>
<html lang="${escapeHtml(ctx.locale)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(c.subject)}</title></head>
<body style="margin:0;padding:24px;background:#f5f5f4;font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#1c1917">
<div style="max-width:560px;margin:0 auto;background:#ffffff;border-radius:12px;padding:32px">
${ctx.logoUrl ? `<img src="${escapeHtml(ctx.logoUrl)}" alt="${escapeHtml(product)}" height="32" style="display:block;margin:0 0 24px">` : `<p style="margin:0 0 24px;font-weight:700;font-size:18px">${escapeHtml(product)}</p>`}
${c.paragraphs.map(p).join("\n")}
${c.action ? `<p style="margin:24px 0"><a href="${escapeHtml(c.action.url)}" style="display:inline-block;background:${color};color:#ffffff;text-decoration:none;padding:12px 20px;border-radius:8px;font-weight:600">${escapeHtml(c.action.label)}</a></p>
<p style="margin:0 0 16px;font-size:13px;color:#57534e;word-break:break-all">${escapeHtml(c.action.url)}</p>` : ""}
${(c.after ?? []).map(p).join("\n")}
<p style="margin:24px 0 0;font-size:12px;color:#78716c">${escapeHtml(footer)}</p>
</div></body></html>`;
  return { subject: c.subject, text, html };
}
