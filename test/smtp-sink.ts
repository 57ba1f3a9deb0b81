import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export type ReceivedMail = { from: string; to: string[]; raw: string; subject: string; text: string };

/** Quoted-printable and soft line breaks, as nodemailer writes long or non-ASCII lines. */
function decodeQuotedPrintable(v: string): string {
  const bytes = v.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, "latin1").toString("utf8");
}

/** The decoded text/plain part of a raw message (enough for the mails Torii writes). */
function textPart(raw: string): string {
  const m = /Content-Type: text\/plain[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*?Content-Transfer-Encoding: ([^\r\n]+)\r?\n\r?\n([\s\S]*?)\r?\n--/i.exec(raw);
  if (!m) return raw;
  const [, encoding, body] = m;
  if (/quoted-printable/i.test(encoding!)) return decodeQuotedPrintable(body!);
  if (/base64/i.test(encoding!)) return Buffer.from(body!.replace(/\s/g, ""), "base64").toString("utf8");
  return body!;
}

function decodeSubject(raw: string): string {
  const m = /^Subject: (.*(?:\r?\n[ \t].*)*)/im.exec(raw);
  if (!m) return "";
  return m[1]!
    .replace(/\r?\n[ \t]/g, " ")
    .replace(/=\?utf-8\?([QB])\?([^?]*)\?=\s*/gi, (_x, enc: string, data: string) =>
      enc.toUpperCase() === "B" ? Buffer.from(data, "base64").toString("utf8") : decodeQuotedPrintable(data.replace(/_/g, " ")),
    )
    .trim();
}

/**
 * A real SMTP server in the test process (no TLS, any credentials accepted and recorded): what
 * Torii delivers lands in `mails`.
 */
export async function startSmtpSink(): Promise<{
  port: number;
  mails: ReceivedMail[];
  logins: { user: string; pass: string }[];
  waitFor(pred: (m: ReceivedMail) => boolean, ms?: number): Promise<ReceivedMail>;
  /** Answers the next `count` messages with a temporary failure (451 and `reply`) instead of taking them. */
  refuseNext(count: number, reply?: string): void;
  close(): Promise<void>;
}> {
  const mails: ReceivedMail[] = [];
  const logins: { user: string; pass: string }[] = [];
  let refusals = 0;
  let refusal = "Try again later";
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    logger: false,
    onAuth(auth, _session, cb) {
      logins.push({ user: auth.username ?? "", pass: auth.password ?? "" });
      cb(null, { user: auth.username });
    },
    onMailFrom(_address, _session, cb) {
      if (refusals > 0) {
        refusals--;
        cb(Object.assign(new Error(refusal), { responseCode: 451 }));
        return;
      }
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject: decodeSubject(raw),
          text: textPart(raw),
        });
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    mails,
    logins,
    async waitFor(pred, ms = 10_000) {
      const until = Date.now() + ms;
      for (;;) {
        const found = mails.find(pred);
        if (found) return found;
        if (Date.now() > until) throw new Error(`no such mail within ${ms} ms (received ${mails.length})`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    refuseNext(count, reply = "Try again later") {
      refusals = count;
      refusal = reply;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => {
          r();
        });
      }),
  };
}
