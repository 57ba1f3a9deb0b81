import { execFileSync } from "node:child_process";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SMTPServer } from "smtp-server";
import { ConfigError, parseConfig } from "@/lib/config";
import { mailServerOf } from "@/lib/mail/transport";

// A private mail server whose certificate its own CA signed: with IDP_SMTP_CA_FILE Torii trusts
// it and upgrades to TLS with STARTTLS; without, delivery fails on the certificate (and never
// falls back to plain text). The certificate is made for the test with openssl.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-smtp-tls-"));
const keyFile = path.join(dir, "key.pem");
const certFile = path.join(dir, "cert.pem");
let server: SMTPServer;
let port = 0;
const received: { secure: boolean; to: string[] }[] = [];

beforeAll(async () => {
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", keyFile, "-out", certFile, "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"], { stdio: "ignore" });
  server = new SMTPServer({
    secure: false,
    key: fs.readFileSync(keyFile),
    cert: fs.readFileSync(certFile),
    authOptional: true,
    logger: false,
    onData(stream, session, cb) {
      stream.resume();
      stream.on("end", () => {
        received.push({ secure: session.secure, to: session.envelope.rcptTo.map((r) => r.address) });
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((r) => {
    server.close(() => {
      r();
    });
  });
  fs.rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string>) => ({ IDP_DATA_DIR: dir, IDP_SMTP_URL: `smtp://localhost:${port}`, ...extra });
const send = (config: ReturnType<typeof parseConfig>, to: string) =>
  mailServerOf(config, null, Buffer.alloc(32), "torii@example.com")!.transport.sendMail({ from: "torii@example.com", to, subject: "TLS", text: "hello" });

describe("SMTP with STARTTLS and a private CA", () => {
  it("IDP_SMTP_CA_FILE: the server's certificate is trusted and the mail goes over TLS", async () => {
    await send(parseConfig(env({ IDP_SMTP_CA_FILE: certFile })), "with-ca@example.com");
    expect(received.find((m) => m.to.includes("with-ca@example.com"))).toEqual({ secure: true, to: ["with-ca@example.com"] });
  });

  it("without it the certificate is refused and nothing is sent in clear", async () => {
    await expect(send(parseConfig(env({})), "without-ca@example.com")).rejects.toThrow(/certificate/i);
    expect(received.some((m) => m.to.includes("without-ca@example.com"))).toBe(false);
  });

  it("a file that is missing or holds no certificate stops the start with the variable named", () => {
    expect(() => parseConfig(env({ IDP_SMTP_CA_FILE: path.join(dir, "missing.pem") }))).toThrow(ConfigError);
    expect(() => parseConfig(env({ IDP_SMTP_CA_FILE: keyFile }))).toThrow(/IDP_SMTP_CA_FILE holds no PEM certificate/);
  });
});
