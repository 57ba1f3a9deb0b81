import { generateKeyPairSync } from "node:crypto";
import { eq } from "drizzle-orm";
import { exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, passwordCredentials } from "@/db/schema";
import { verifyPassword } from "@/lib/passwords";
import { getMachineKey, getPasswordHash } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";

let t: TestInstance;
beforeAll(async () => {
  t = await startTestInstance();
});
afterAll(() => t.close());

const post = (path: string, json?: unknown) => t.api("/management/v1" + path, { method: "POST", json: json ?? {} });
const patch = (path: string, json: unknown) => t.api("/management/v1" + path, { method: "PATCH", json });
const get = (path: string) => t.api("/management/v1" + path);
const del = (path: string) => t.api("/management/v1" + path, { method: "DELETE" });

async function fieldPaths(res: Response): Promise<string[]> {
  expect(res.status).toBe(400);
  const body = await res.json();
  expect(body.error).toBe("invalid_request");
  return body.fields.map((f: { path: string }) => f.path);
}

const PASSWORD = "correct horse battery";

describe("human users", () => {
  it("creates a user with every field; the response has its id and never a password hash", async () => {
    const res = await post("/users", {
      username: "Alice",
      password: PASSWORD,
      email: "alice@example.com",
      emailVerified: true,
      givenName: "Alice",
      familyName: "Liddell",
      nickname: "al",
      locale: "de-CH",
      phone: "+41791234567",
      phoneVerified: true,
      address: { streetAddress: "1 Rabbit Hole", locality: "Oxford", region: "Oxon", postalCode: "OX1", country: "GB" },
    });
    expect(res.status).toBe(201);
    const u = await res.json();
    expect(u.id).toMatch(/^\d+$/);
    expect(u).toMatchObject({
      type: "human",
      username: "Alice",
      email: "alice@example.com",
      emailVerified: true,
      locale: "de-CH",
      phoneVerified: true,
      address: { locality: "Oxford", country: "GB" },
      roles: [],
      locked: false,
    });
    expect(u.loginName).toBe("Alice@127.0.0.1");
    const text = JSON.stringify(u) + JSON.stringify(await (await get(`/users/${u.id}`)).json());
    // Whether a new password is due is the only word of it the view has; nothing of the password itself.
    expect(u.passwordChangeRequired).toBe(false);
    expect(text.replaceAll('"passwordChangeRequired":false', "")).not.toMatch(/argon2|password/i);
    const hash = await getPasswordHash(t.inst.db, u.id);
    expect(hash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(hash!, PASSWORD)).toBe(true);
  });

  it("answers 409 for a duplicate username, case-insensitively, on create and on rename", async () => {
    await post("/users", { username: "bob" });
    const dup = await post("/users", { username: "BOB" });
    expect(dup.status).toBe(409);
    const body = await dup.json();
    expect(body.error).toBe("conflict");
    expect(body.fields[0]).toMatchObject({ path: "username", code: "username_taken" });
    const carol = await (await post("/users", { username: "carol" })).json();
    expect((await patch(`/users/${carol.id}`, { username: "Bob" })).status).toBe(409);
    expect((await post("/users", { type: "machine", username: "bOb" })).status).toBe(409);
  });

  it("checks the password policy from the settings with field messages", async () => {
    const short = await (await post("/users", { username: "dave", password: "short" })).json();
    expect(short.fields).toEqual([expect.objectContaining({ path: "password", code: "password_min_length", params: { minimum: 10 } })]);
    await t.api("/management/v1/settings", {
      method: "PUT",
      json: { passwordPolicy: { requireNumber: true, requireUppercase: true } },
    });
    const res = await post("/users", { username: "dave", password: "long but lowercase only" });
    expect(res.status).toBe(400);
    const fields = (await res.json()).fields as { message: string; code: string }[];
    const messages = fields.map((f) => f.message).join(" ");
    expect(messages).toMatch(/number/);
    expect(messages).toMatch(/uppercase/);
    expect(fields.map((f) => f.code).sort()).toEqual(["password_number", "password_uppercase"]);
    expect((await post("/users", { username: "dave", password: "Long enough 4 policy" })).status).toBe(201);
    await t.api("/management/v1/settings", {
      method: "PUT",
      json: { passwordPolicy: { requireNumber: false, requireUppercase: false } },
    });
  });

  it("validates fields with their paths", async () => {
    const paths = await fieldPaths(
      await post("/users", {
        username: "has space",
        email: "not-an-email",
        locale: "??",
        address: { city: "x" },
        roles: ["superuser"],
        bogus: 1,
      }),
    );
    expect(paths.sort()).toEqual(["address.city", "bogus", "email", "locale", "roles.0", "username"]);
    const res = await post("/users", { username: "has space", email: "not-an-email", locale: "??", phone: "call me" });
    const codes = Object.fromEntries(((await res.json()).fields as { path: string; code: string }[]).map((f) => [f.path, f.code]));
    expect(codes).toEqual({ username: "username_characters", email: "email", locale: "language_tag", phone: "phone" });
    expect(await fieldPaths(await post("/users", { type: "robot", username: "x" }))).toEqual(["type"]);
    expect(await fieldPaths(await post("/users", {}))).toEqual(["username"]);
  });

  it("updates fields, roles and locked; a changed email is no longer verified", async () => {
    const u = await (await post("/users", { username: "erin", email: "erin@example.com", emailVerified: true })).json();
    const res = await patch(`/users/${u.id}`, {
      email: "erin@example.org",
      givenName: "Erin",
      roles: ["admin", "impersonation"],
      locked: true,
    });
    expect(res.status).toBe(200);
    const v = await res.json();
    expect(v).toMatchObject({ email: "erin@example.org", emailVerified: false, givenName: "Erin", roles: ["admin", "impersonation"], locked: true });
    const cleared = await (await patch(`/users/${u.id}`, { givenName: null, locked: false })).json();
    expect(cleared).toMatchObject({ givenName: null, locked: false });
    expect(await fieldPaths(await patch(`/users/${u.id}`, { password: "x" }))).toEqual(["password"]);
    expect(await fieldPaths(await patch(`/users/${u.id}`, { description: "machine field" }))).toEqual(["description"]);
    expect((await patch("/users/1", { givenName: "x" })).status).toBe(404);

    const actions = (await t.inst.db.select().from(auditEvents).where(eq(auditEvents.targetId, u.id))).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(["user.created", "user.updated", "user.roles_changed", "user.locked", "user.unlocked"]));
  });

  it("sets a password with POST /users/{id}/password, policy checked", async () => {
    const u = await (await post("/users", { username: "frank" })).json();
    expect(await fieldPaths(await post(`/users/${u.id}/password`, { password: "short" }))).toEqual(["password"]);
    expect(await fieldPaths(await post(`/users/${u.id}/password`, {}))).toEqual(["password"]);
    const res = await post(`/users/${u.id}/password`, { password: PASSWORD });
    expect(res.status).toBe(204);
    const [row] = await t.inst.db.select().from(passwordCredentials).where(eq(passwordCredentials.userId, u.id));
    expect(await verifyPassword(row!.hash, PASSWORD)).toBe(true);
    expect((await post("/users/1/password", { password: PASSWORD })).status).toBe(404);
    const [ev] = await t.inst.db.select().from(auditEvents).where(eq(auditEvents.action, "user.password_set"));
    expect(ev).toBeTruthy();
  });

  it("lists paged, searching username or email case-insensitively", async () => {
    for (let i = 0; i < 5; i++) await post("/users", { username: `page-${i}`, email: `p${i}@paging.example` });
    const page = await (await get("/users?search=PAGE-&limit=2&offset=1")).json();
    expect(page.total).toBe(5);
    expect(page.users.map((u: { username: string }) => u.username)).toEqual(["page-1", "page-2"]);
    expect(page).toMatchObject({ limit: 2, offset: 1 });
    const byMail = await (await get("/users?search=p3@paging")).json();
    expect(byMail.users.map((u: { username: string }) => u.username)).toEqual(["page-3"]);
    const wildcard = await (await get("/users?search=%25")).json();
    expect(wildcard.total).toBe(0);
    expect(await fieldPaths(await get("/users?limit=0&offset=-1"))).toEqual(["limit", "offset"]);
  });

  it("lists only the users named by ids, at most 50 of them", async () => {
    const a = await (await post("/users", { username: "ids-a" })).json();
    const b = await (await post("/users", { username: "ids-b" })).json();
    await post("/users", { username: "ids-c" });
    const res = await (await get(`/users?ids=${b.id},${a.id},unknown-id,${a.id}`)).json();
    expect(res.total).toBe(2);
    expect(res.users.map((u: { username: string }) => u.username)).toEqual(["ids-a", "ids-b"]);
    const tooMany = Array.from({ length: 51 }, (_, i) => `id-${i}`).join(",");
    expect(await fieldPaths(await get(`/users?ids=${tooMany}`))).toEqual(["ids"]);
    expect(await fieldPaths(await get("/users?ids=,"))).toEqual(["ids"]);
  });

  it("deletes a user, then answers 404", async () => {
    const u = await (await post("/users", { username: "gone", password: PASSWORD })).json();
    expect((await del(`/users/${u.id}`)).status).toBe(204);
    expect((await get(`/users/${u.id}`)).status).toBe(404);
    expect(await getPasswordHash(t.inst.db, u.id)).toBeUndefined();
    expect((await del(`/users/${u.id}`)).status).toBe(404);
  });
});

describe("machine users and their keys", () => {
  it("creates a machine user with name and description", async () => {
    const res = await post("/users", { type: "machine", username: "ci-bot", name: "CI", description: "deploys" });
    expect(res.status).toBe(201);
    const m = await res.json();
    expect(m).toMatchObject({ type: "machine", username: "ci-bot", name: "CI", description: "deploys", roles: [] });
    expect(m.email).toBeUndefined();
    expect(await fieldPaths(await post("/users", { type: "machine", username: "m2", email: "x@example.com" }))).toEqual(["email"]);
    expect((await post(`/users/${m.id}/password`, { password: PASSWORD })).status).toBe(400);
  });

  it("generates an RS256 key pair: the private JWK (kid = keyId) signs a JWT the stored public key verifies", async () => {
    const m = await (await post("/users", { type: "machine", username: "signer" })).json();
    const res = await post(`/users/${m.id}/keys`, {});
    expect(res.status).toBe(201);
    const k = await res.json();
    expect(k.keyId).toMatch(/^\d+$/);
    expect(k.alg).toBe("RS256");
    expect(k.privateKey).toMatchObject({ kty: "RSA", kid: k.keyId, alg: "RS256" });
    expect(k.privateKey.d).toBeTruthy();
    expect(k.publicKey.d).toBeUndefined();

    const jwt = await new SignJWT({ sub: m.id })
      .setProtectedHeader({ alg: "RS256", kid: k.keyId })
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(await importJWK(k.privateKey, "RS256"));
    const stored = (await getMachineKey(t.inst.db, k.keyId))!;
    expect(stored.userId).toBe(m.id);
    expect(JSON.stringify(stored.publicJwk)).not.toContain(k.privateKey.d);
    const { payload, protectedHeader } = await jwtVerify(jwt, await importJWK(stored.publicJwk, stored.alg));
    expect(payload.sub).toBe(m.id);
    expect(protectedHeader.kid).toBe(stored.publicJwk.kid);

    const list = await (await get(`/users/${m.id}/keys`)).json();
    expect(list.keys).toHaveLength(1);
    expect(list.keys[0].privateKey).toBeUndefined();
    expect(JSON.stringify(list)).not.toContain(k.privateKey.d);
  });

  it("registers a public key (RSA, EC or OKP), deriving alg, and refuses private, weak or mismatched keys", async () => {
    const m = await (await post("/users", { type: "machine", username: "registrar" })).json();
    const ec = await generateKeyPair("ES384", { extractable: true });
    const res = await post(`/users/${m.id}/keys`, { publicKey: await exportJWK(ec.publicKey) });
    expect(res.status).toBe(201);
    const k = await res.json();
    expect(k.alg).toBe("ES384");
    expect(k.privateKey).toBeUndefined();
    expect(k.publicKey).toMatchObject({ kty: "EC", crv: "P-384", kid: k.keyId });

    const rsa = await generateKeyPair("PS256", { extractable: true });
    const ps = await (await post(`/users/${m.id}/keys`, { publicKey: { ...(await exportJWK(rsa.publicKey)), alg: "PS256" } })).json();
    expect(ps.alg).toBe("PS256");

    const bad = async (publicKey: unknown) => fieldPaths(await post(`/users/${m.id}/keys`, { publicKey }));
    expect(await bad(await exportJWK(ec.privateKey))).toEqual(["publicKey"]);
    expect(await bad({ ...(await exportJWK(ec.publicKey)), alg: "ES256" })).toEqual(["publicKey"]);
    const weak = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ format: "jwk" });
    expect(await bad(weak)).toEqual(["publicKey"]);
    // Every algorithm discovery advertises for assertions has a key type: Ed25519 signs as EdDSA.
    const ed = await generateKeyPair("EdDSA", { extractable: true });
    const okp = await (await post(`/users/${m.id}/keys`, { publicKey: await exportJWK(ed.publicKey) })).json();
    expect(okp.alg).toBe("EdDSA");
    expect(okp.publicKey).toMatchObject({ kty: "OKP", crv: "Ed25519" });
    expect(await bad({ ...(await exportJWK(ed.publicKey)), alg: "ES256" })).toEqual(["publicKey"]);
    expect(await bad({ kty: "OKP", crv: "X25519", x: (await exportJWK(ed.publicKey)).x })).toEqual(["publicKey"]);
    expect(await bad({ kty: "EC", crv: "P-256", x: "AAAA", y: "AAAA" })).toEqual(["publicKey"]);
    expect(await bad("not a key")).toEqual(["publicKey"]);
  });

  it("deletes a key; unknown users and keys are 404; humans have no keys", async () => {
    const m = await (await post("/users", { type: "machine", username: "rotator" })).json();
    const k = await (await post(`/users/${m.id}/keys`)).json();
    expect((await del(`/users/${m.id}/keys/${k.keyId}`)).status).toBe(204);
    expect(await getMachineKey(t.inst.db, k.keyId)).toBeUndefined();
    expect((await del(`/users/${m.id}/keys/${k.keyId}`)).status).toBe(404);
    expect((await post("/users/1/keys")).status).toBe(404);
    expect((await get("/users/1/keys")).status).toBe(404);
    const h = await (await post("/users", { username: "human-no-keys" })).json();
    expect((await post(`/users/${h.id}/keys`)).status).toBe(400);
    const actions = (await t.inst.db.select().from(auditEvents).where(eq(auditEvents.targetId, m.id))).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(["user.key_added", "user.key_removed"]));
  });
});
