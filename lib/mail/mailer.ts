import type { Config } from "@/lib/config";
import { dateOf, type Clock } from "@/lib/clock";
import type { Executor } from "@/lib/db/client";
import type { Logger } from "@/lib/log";
import { pageOverrides } from "@/lib/i18n/overrides";
import type { Caches } from "@/lib/store/caches";
import { claimDueMails, claimMail, enqueueMail, getOutboxMail, markMailFailed, markMailSent, type NewMail, type OutboxMail } from "@/lib/store/mail-outbox";
import { getSettings, type Settings } from "@/lib/store/settings";
import { renderMail, type MailKind } from "./render";
import { mailServerOf, type MailServer } from "./transport";

/** Seconds to wait after the 1st, 2nd... failed try; after the last, the mail stays `failed`. */
const RETRY_DELAYS = [30, 120, 600, 1800, 7200];

type Scope = { db: Executor; caches: Caches; clock: Clock; config: Config; masterKey: Buffer; log: Logger; issuer: string };

/**
 * Torii's mail: every mail is first written to the outbox (in the caller's transaction when it
 * has one), then delivered in the background, so a request never waits for, or fails because of,
 * the mail server. Delivery retries with growing delays. Without a mail server the mail is
 * `held`: the console's outbox shows it.
 */
export class Mailer {
  private server: { key: string; server: MailServer | null } | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private closed = false;

  constructor(private readonly scope: Scope) {}

  /**
   * The mail server now in force, cached while what it is made of stays the same. Keyed by the
   * SMTP settings themselves, not by the settings' time of change: two changes within one
   * millisecond (or one clock tick) must not keep the old server.
   */
  mailServer(settings: Settings): MailServer | null {
    const key = JSON.stringify([settings.smtp, settings.primaryDomain]);
    if (this.server?.key !== key) {
      this.server?.server?.transport.close();
      this.server = { key, server: mailServerOf(this.scope.config, settings.smtp, this.scope.masterKey, `no-reply@${settings.primaryDomain}`) };
    }
    return this.server.server;
  }

  /**
   * Renders a mail in the recipient's language with the brand, and decides whether it will be
   * sent or held, ready for `enqueue`. Call it before a transaction opens: it reads the engine's
   * caches, which must not be filled from a transaction (and on PGlite would wait for it).
   */
  async compose(
    kind: MailKind,
    to: { address: string; locale: string | null; userId?: string | null },
    values: Record<string, string | number>,
  ): Promise<{ mail: NewMail; state: "queued" | "held" }> {
    const settings = await getSettings(this.scope);
    const locale = to.locale?.slice(0, 2) || settings.defaultLocale;
    const rendered = renderMail(kind, values, {
      locale,
      branding: settings.branding,
      logoUrl: settings.logo ? `${this.scope.issuer}/ui/branding/logo` : null,
      overrides: await pageOverrides(this.scope, locale),
    });
    return { mail: { to: to.address, ...rendered, template: kind, userId: to.userId ?? null }, state: this.mailServer(settings) ? "queued" : "held" };
  }

  /** Writes a composed mail to the outbox with `db` (a transaction commits it with the rest); call `kick` after. */
  enqueue(db: Executor, composed: { mail: NewMail; state: "queued" | "held" }): Promise<OutboxMail> {
    return enqueueMail(db, composed.mail, composed.state, dateOf(this.scope.clock));
  }

  /** Delivers what is due now, in the background (after a commit that queued mail). */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.deliverDue()
      .catch((err: unknown) => {
        this.scope.log.error({ errClass: (err as Error).name }, "mail delivery failed");
      })
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** One pass over the due mails; returns once each was tried. */
  async deliverDue(now = dateOf(this.scope.clock)): Promise<void> {
    const settings = await getSettings(this.scope);
    const server = this.mailServer(settings);
    if (!server) return;
    for (;;) {
      const batch = await claimDueMails(this.scope.db, now);
      if (!batch.length) return;
      await Promise.all(batch.map((m) => this.deliverOne(server, m)));
      if (batch.length < 10) return;
    }
  }

  /**
   * Sends one outbox mail now (the console's test mail), and answers its state afterwards. The
   * mail is claimed first, so that a delivery pass running at the same moment (or a second call)
   * does not send it too.
   */
  async deliverNow(id: string, now = dateOf(this.scope.clock)): Promise<OutboxMail | undefined> {
    const settings = await getSettings(this.scope);
    const server = this.mailServer(settings);
    const mail = server ? await claimMail(this.scope.db, id, now) : undefined;
    if (server && mail) await this.deliverOne(server, mail);
    return getOutboxMail(this.scope.db, id);
  }

  private async deliverOne(server: MailServer, mail: OutboxMail): Promise<void> {
    try {
      await server.transport.sendMail({ from: server.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
      await markMailSent(this.scope.db, mail.id, dateOf(this.scope.clock));
    } catch (err) {
      const delay = RETRY_DELAYS[mail.attempts - 1];
      const message = err instanceof Error ? err.message : String(err);
      await markMailFailed(this.scope.db, mail.id, message, delay === undefined ? null : new Date(this.scope.clock.now() + delay * 1000));
      this.scope.log.warn({ mailId: mail.id, attempts: mail.attempts, error: message }, "mail not delivered");
    }
  }

  /** Stops taking new work and waits for a delivery in flight. */
  async close(): Promise<void> {
    this.closed = true;
    await this.running;
    this.server?.server?.transport.close();
  }
}
