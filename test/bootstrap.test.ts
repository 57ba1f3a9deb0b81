import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { instanceSettings, personalAccessTokens, passwordCredentials, signingKeys, textOverrides, users, auditEvents } from "@/db/schema";
import { bootstrap, MasterKeyMismatchError } from "@/lib/bootstrap";
import { openDatabase, type Database } from "@/lib/db/client";
import { migrate } from "@/lib/db/migrate";
import { resolveMasterKey } from "@/lib/master-key";
import { verifyPassword } from "@/lib/passwords";
import { startupBanner } from "@/lib/server/banner";
import { userForPat } from "@/lib/store/pats";
import { insertApi } from "@/lib/store/apis";
import { insertClient } from "@/lib/store/clients";
import { consentsOf } from "@/lib/store/consents";
import { insertUser } from "@/lib/store/users";
import journal from "@/db/migrations/meta/_journal.json";
import { createTestDatabase, TEST_DB } from "./harness";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Opens the database the way a (re)started instance does: on disk for PGlite, a server database for pg. */
async function fixture() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "torii-boot-"));
  cleanups.push(() => { fs.rmSync(dataDir, { recursive: true, force: true }); });
  const pgdb = TEST_DB === "pg" ? await createTestDatabase() : undefined;
  if (pgdb) cleanups.push(() => pgdb.drop());
  const open = async () => {
    const d = openDatabase({ databaseUrl: pgdb?.url, dataDir });
    await migrate(d);
    return d;
  };
  return { dataDir, open };
}

async function start(db: Database, dataDir: string, adminPat?: string) {
  const masterKey = resolveMasterKey(undefined, dataDir);
  return bootstrap(db.db, { issuer: "http://localhost:3000", masterKey, dataDir, adminPat });
}

describe("bootstrap", () => {
  it("creates settings, a signing key, the admin with a password file (0600) and a PAT file", async () => {
    const { dataDir, open } = await fixture();
    const d = await open();
    const r = await start(d, dataDir);
    expect(r.created).toBe(true);
    if (!r.created) return;

    const pwFile = path.join(dataDir, "admin-password");
    const patFile = path.join(dataDir, "admin.pat");
    expect(fs.readFileSync(pwFile, "utf8").trim()).toBe(r.adminPassword);
    expect(fs.statSync(pwFile).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(patFile, "utf8").trim()).toBe(r.adminPat);
    expect(fs.statSync(patFile).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(dataDir, "master.key")).mode & 0o777).toBe(0o600);

    const [admin] = await d.db.select().from(users).where(eq(users.username, "admin"));
    expect(admin?.roles).toContain("admin");
    const [cred] = await d.db.select().from(passwordCredentials).where(eq(passwordCredentials.userId, admin!.id));
    expect(cred!.hash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(cred!.hash, r.adminPassword)).toBe(true);

    // The PAT is stored only as a hash, and it identifies the admin.
    const pats = await d.db.select().from(personalAccessTokens);
    expect(pats.map((p) => p.tokenHash)).not.toContain(r.adminPat);
    expect((await userForPat(d.db, r.adminPat, new Date()))?.user.id).toBe(admin!.id);

    const keys = await d.db.select().from(signingKeys);
    expect(keys).toHaveLength(1);
    expect(keys[0]!.status).toBe("active");
    expect(keys[0]!.alg).toBe("RS256");
    const audit = await d.db.select().from(auditEvents).where(eq(auditEvents.action, "instance.bootstrapped"));
    expect(audit).toHaveLength(1);
    await d.close();
  });

  it("uses IDP_ADMIN_PAT when set and writes no PAT file", async () => {
    const { dataDir, open } = await fixture();
    const d = await open();
    const pat = "torii_pat_" + "x".repeat(40);
    const r = await start(d, dataDir, pat);
    expect(r.created && r.adminPatGenerated).toBe(false);
    expect(fs.existsSync(path.join(dataDir, "admin.pat"))).toBe(false);
    expect((await userForPat(d.db, pat, new Date()))?.user.username).toBe("admin");
    await d.close();
  });

  it("never bootstraps again on restart and keeps every credential and key", async () => {
    const { dataDir, open } = await fixture();
    let d = await open();
    const first = await start(d, dataDir);
    if (!first.created) throw new Error("expected a first bootstrap");
    const before = {
      users: await d.db.select().from(users),
      creds: await d.db.select().from(passwordCredentials),
      pats: await d.db.select().from(personalAccessTokens),
      keys: await d.db.select().from(signingKeys),
    };
    const files = ["admin-password", "admin.pat", "master.key"].map((f) => fs.readFileSync(path.join(dataDir, f), "utf8"));
    await d.close();

    d = await open(); // a restart: same data folder, same database
    const again = await start(d, dataDir, "torii_pat_" + "y".repeat(40));
    expect(again.created).toBe(false);
    expect(await d.db.select().from(users)).toEqual(before.users);
    expect(await d.db.select().from(passwordCredentials)).toEqual(before.creds);
    expect(await d.db.select().from(personalAccessTokens)).toEqual(before.pats);
    expect(await d.db.select().from(signingKeys)).toEqual(before.keys);
    expect(["admin-password", "admin.pat", "master.key"].map((f) => fs.readFileSync(path.join(dataDir, f), "utf8"))).toEqual(files);
    expect((await userForPat(d.db, first.adminPat, new Date()))?.user.username).toBe("admin");
    await d.close();
  });

  it("writes the credential files before committing: a first start that cannot write them commits nothing and can be repeated", async () => {
    const { dataDir, open } = await fixture();
    const d = await open();
    // A directory where the password file should go makes writing it fail.
    fs.mkdirSync(path.join(dataDir, "admin-password"));
    await expect(start(d, dataDir)).rejects.toThrow();
    expect(await d.db.select().from(users)).toEqual([]);
    fs.rmdirSync(path.join(dataDir, "admin-password"));
    const r = await start(d, dataDir);
    if (!r.created) throw new Error("expected the first start to be repeated");
    const [cred] = await d.db.select().from(passwordCredentials);
    expect(await verifyPassword(cred!.hash, fs.readFileSync(path.join(dataDir, "admin-password"), "utf8").trim())).toBe(true);
    expect((await userForPat(d.db, fs.readFileSync(path.join(dataDir, "admin.pat"), "utf8").trim(), new Date()))?.user.username).toBe("admin");
    await d.close();
  });

  it("the start-up message says where the administrator's password is, never the password", async () => {
    const { dataDir, open } = await fixture();
    const d = await open();
    const r = await start(d, dataDir);
    if (!r.created) throw new Error("expected a first bootstrap");
    const banner = startupBanner({ issuer: "http://localhost:3000", database: "x", dataDir, firstStart: true, adminPatFromEnv: false, exists: fs.existsSync });
    expect(banner).not.toContain(r.adminPassword);
    expect(banner).not.toContain(r.adminPat);
    expect(banner).toContain(path.join(dataDir, "admin-password"));
    expect(banner).toContain(path.join(dataDir, "admin.pat"));
    await d.close();
  });

  it("refuses to start with a master key other than the one the database was set up with", async () => {
    const { dataDir, open } = await fixture();
    const d = await open();
    await start(d, dataDir);
    fs.writeFileSync(path.join(dataDir, "master.key"), "cd".repeat(32));
    await expect(start(d, dataDir)).rejects.toBeInstanceOf(MasterKeyMismatchError);
    await d.close();
  });

  it("applies migrations once, even when asked twice", async () => {
    const { open } = await fixture();
    const d = await open();
    expect((await migrate(d)).applied).toBe(0);
    await d.close();
  });

  it("an upgrade moves the text overrides of an older version to their full keys", async () => {
    const { open } = await fixture();
    const d = await open();
    // As a version before 0003 left it: overrides keyed below the login namespace.
    const s = await d.session();
    try {
      await s.exec(`INSERT INTO text_overrides (locale, key, value) VALUES ('en', 'loginName.title', 'Welcome')`);
      const { when } = journal.entries.find((e) => e.tag === "0003_text_override_namespaces")!;
      await s.exec(`DELETE FROM torii_migrations WHERE created_at = ${when}`);
    } finally {
      await s.release();
    }
    expect((await migrate(d)).applied).toBe(1);
    const rows = await d.db.select({ key: textOverrides.key, value: textOverrides.value }).from(textOverrides);
    expect(rows).toEqual([{ key: "login.loginName.title", value: "Welcome" }]);
    await d.close();
  });

  it("an upgrade moves the old lockout policy to the new model and adds the registration limit and retention", async () => {
    const { dataDir, open } = await fixture();
    const d = await open();
    await start(d, dataDir);
    // As a version before 0005 left it.
    const s = await d.session();
    try {
      await s.exec(`DROP TABLE login_failures; DROP TABLE account_lockouts; ALTER TABLE instance_settings DROP COLUMN retention`);
      await s.exec(`UPDATE instance_settings SET lockout_policy = '{"maxFailures": 7, "windowSeconds": 600}', rate_limits = '{"jwksPerMinute": 300, "tokenPerMinute": 6000}'`);
      const { when } = journal.entries.find((e) => e.tag === "0005_lockout_retention")!;
      await s.exec(`DELETE FROM torii_migrations WHERE created_at = ${when}`);
    } finally {
      await s.release();
    }
    expect((await migrate(d)).applied).toBe(1);
    const [row] = await d.db.select().from(instanceSettings);
    expect(row!.lockoutPolicy).toEqual({
      windowSeconds: 600,
      freeFailures: 7,
      addressFreeFailures: 70,
      maxDelaySeconds: 900,
      lockAfterFailures: 50,
      lockSeconds: 3600,
    });
    expect(row!.rateLimits).toEqual({ jwksPerMinute: 300, tokenPerMinute: 6000, registrationPerHour: 20 });
    expect(row!.retention).toEqual({ auditDays: 90 });
    await d.close();
  });

  it("an upgrade moves the API scopes of older consents under the APIs the client may use that define them", async () => {
    const { open } = await fixture();
    const d = await open();
    const user = await insertUser(d.db, { type: "human", username: "consenter" });
    const lifetimes = { accessTokenLifetime: 300, idTokenLifetime: 300, refreshTokenLifetime: 3600 };
    const reg = { responseTypes: ["code"], grantTypes: ["authorization_code"], authMethod: "none", ...lifetimes };
    const { client } = await insertClient(d.db, { ...reg, name: "Partner", apiScopes: { "https://orders.example": ["read"], "https://files.example": ["read"] } });
    await insertApi(d.db, { identifier: "https://orders.example", name: "Orders", scopes: [{ name: "read", description: "" }, { name: "write", description: "" }], accessTokenLifetime: 300 });
    await insertApi(d.db, { identifier: "https://files.example", name: "Files", scopes: [{ name: "read", description: "" }], accessTokenLifetime: 300 });
    // Defines "write" too, but the client may not use it: it gets nothing.
    await insertApi(d.db, { identifier: "https://other.example", name: "Other", scopes: [{ name: "write", description: "" }], accessTokenLifetime: 300 });
    // As a version before 0014 left it: API scopes among the protocol scopes.
    const s = await d.session();
    try {
      await s.exec(`ALTER TABLE consents DROP COLUMN api_scopes`);
      await s.exec(`INSERT INTO consents (user_id, client_id, scopes, granted_at) VALUES ('${user.id}', '${client.id}', '{read,openid,profile}', now())`);
      const { when } = journal.entries.find((e) => e.tag === "0014_consent_api_scopes")!;
      await s.exec(`DELETE FROM torii_migrations WHERE created_at = ${when}`);
    } finally {
      await s.release();
    }
    expect((await migrate(d)).applied).toBe(1);
    expect(await consentsOf(d.db, client.id, [user.id])).toEqual({
      [user.id]: { scopes: ["openid", "profile"], apis: { "https://files.example": ["read"], "https://orders.example": ["read"] }, grantedAt: expect.any(Date) },
    });
    await d.close();
  });
});
