import nodemailer, { type Transporter } from "nodemailer";
import type { SmtpSettings } from "@/db/schema";
import type { Config } from "@/lib/config";
import { decrypt, encrypt } from "@/lib/crypto";

/**
 * Which mail server Torii uses: IDP_SMTP_URL from the environment when set (deployments
 * configured as code), else the console's SMTP settings, else none (mails stay in the outbox).
 */
export type MailServer = { transport: Transporter; from: string; source: "environment" | "settings" };

/** The SMTP password is sealed with the master key, bound to this use. */
const PASSWORD_AAD = "smtp-password";

export function sealSmtpPassword(masterKey: Buffer, password: string): string {
  return encrypt(masterKey, password, PASSWORD_AAD);
}

// A mail server that does not answer must not hold a delivery for minutes (nodemailer's defaults).
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

function fromHeader(address: string, name: string | null | undefined): string {
  return name ? `"${name.replace(/["\\\r\n]/g, "")}" <${address}>` : address;
}

/** A private mail server's CA (IDP_SMTP_CA_FILE) is trusted besides the system's certificates. */
function tlsOf(config: Config): { tls?: { ca: string } } {
  return config.smtpCa ? { tls: { ca: config.smtpCa } } : {};
}

export function mailServerOf(config: Config, smtp: SmtpSettings | null, masterKey: Buffer, fallbackFrom: string): MailServer | null {
  if (config.smtp) {
    const url = new URL(config.smtp.url);
    return {
      transport: nodemailer.createTransport({
        host: url.hostname,
        port: url.port ? Number(url.port) : url.protocol === "smtps:" ? 465 : 587,
        secure: url.protocol === "smtps:",
        auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
        ...tlsOf(config),
        ...TIMEOUTS,
      }),
      from: config.smtp.from ?? fallbackFrom,
      source: "environment",
    };
  }
  if (!smtp) return null;
  return {
    transport: nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.security === "tls",
      requireTLS: smtp.security === "starttls",
      ignoreTLS: smtp.security === "none",
      auth: smtp.user ? { user: smtp.user, pass: smtp.passwordEnc ? decrypt(masterKey, smtp.passwordEnc, PASSWORD_AAD) : "" } : undefined,
      ...tlsOf(config),
      ...TIMEOUTS,
    }),
    from: fromHeader(smtp.fromAddress, smtp.fromName),
    source: "settings",
  };
}
