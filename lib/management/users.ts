import { MAX_PAGE } from "./paging";
import { dateOf } from "@/lib/clock";
import { exportJWK, generateKeyPair } from "jose";
import { z } from "zod";
import { randomId } from "@/lib/crypto";
import { checkPasswordPolicy, describePolicyViolation } from "@/lib/passwords";
import { recordAudit } from "@/lib/store/audit";
import { deletePat, generatePat, insertPat, listPats } from "@/lib/store/pats";
import { getSettings, readSettings } from "@/lib/store/settings";
import {
  countOtherActiveAdmins,
  deleteMachineKey,
  deleteUser,
  DuplicateUsername,
  getUser,
  insertMachineKey,
  insertUser,
  listMachineKeys,
  listUsers,
  ROLES,
  setPassword,
  updateUser,
  type MachineKey,
  type NewUser,
  type User,
} from "@/lib/store/users";
import type { Executor } from "@/lib/db/client";
import { cutOffUser } from "@/lib/store/cut-off";
import { listUserConsents, revokeConsent } from "@/lib/store/consents";
import { mutate, type Invalidation } from "@/lib/store/invalidation";
import { email, loginNameOf, personName, username } from "@/lib/users/fields";
import { isActiveAdmin } from "./auth";
import { sendEmailVerification } from "@/lib/login/email-verification";
import { codedPattern } from "@/lib/problem";
import { conflict, invalid, invalidFields, notFound, parseWith, type FieldError } from "./http";
import { checkPublicJwk } from "./public-keys";
import { named, route, type Ctx } from "./route";
import { shownText } from "@/lib/text/shown-text";

// ---- schemas ----

const text = (max = 200) => z.string().trim().max(max);
// At most 35 characters: what RFC 5646 4.4.1 asks every implementation to keep (found by a probe: 902).
const locale = z.string().max(35).regex(codedPattern(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/, "language_tag"), "Must be a language tag such as en or de-CH.");
const phone = z
  .string()
  .regex(codedPattern(/^\+?[0-9][0-9 ()./-]{2,30}$/, "phone"), "Must be a phone number, preferably in E.164 form (+41791234567).");
const address = z.strictObject({
  streetAddress: text(500).nullable().optional(),
  locality: text().nullable().optional(),
  region: text().nullable().optional(),
  postalCode: text(50).nullable().optional(),
  country: text().nullable().optional(),
});
const roles = z.array(z.enum(ROLES)).transform((l) => [...new Set(l)]);
/** A date that must be in the future: checked in the handler against the engine's clock (`future`). */
const futureDate = z.iso
  .datetime({ offset: true })
  .transform((v) => new Date(v))
  .describe("Must be in the future.");

/** The expiry given, refused with a field error unless it is later than now by the engine's clock. */
function future(ctx: Ctx, expiresAt: Date | undefined): Date | null {
  if (expiresAt && expiresAt.getTime() <= ctx.inst.clock.now()) {
    throw invalidFields([{ path: "expiresAt", code: "in_future", message: "Must be in the future." }]);
  }
  return expiresAt ?? null;
}

const humanFields = {
  username,
  email: email.nullable(),
  emailVerified: z.boolean(),
  givenName: personName.nullable(),
  familyName: personName.nullable(),
  nickname: shownText(200).nullable(),
  locale: locale.nullable(),
  phone: phone.nullable(),
  phoneVerified: z.boolean(),
  address: address.nullable(),
  roles,
  locked: z.boolean(),
  passwordChangeRequired: z
    .boolean()
    .describe("The user must choose a new password at the next sign-in with the password (sessions signed in before go on)."),
};
const machineFields = {
  username,
  name: shownText(200).min(1),
  description: text(1000).nullable(),
  roles,
  locked: z.boolean(),
};

const HumanCreate = named(
  "HumanUserCreate",
  z.strictObject({
    type: z.literal("human").optional().describe("Defaults to human when left out."),
    ...z.object(humanFields).partial().shape,
    username,
    password: z.string().optional().describe("Checked against the instance password policy."),
  }),
);
const MachineCreate = named(
  "MachineUserCreate",
  z.strictObject({
    type: z.literal("machine"),
    ...z.object(machineFields).partial().shape,
    username,
  }),
);
const UserCreate = z.discriminatedUnion("type", [HumanCreate, MachineCreate], {
  // zod types this issue as invalid_union only, but an input that is not an object reaches it
  // as invalid_type, which keeps zod's own message: hence the check and the wider type.
  error: (issue: { readonly code: string }) => (issue.code === "invalid_union" ? 'Must be "human" (the default) or "machine".' : undefined),
});
const HumanPatch = named("HumanUserPatch", z.strictObject(humanFields).partial());
const MachinePatch = named("MachineUserPatch", z.strictObject(machineFields).partial());

const iso = z.iso.datetime();
const common = {
  id: z.string(),
  username: z.string(),
  /** username@primaryDomain, as the login page and introspection show it. */
  loginName: z.string(),
  roles: z.array(z.enum(ROLES)),
  locked: z.boolean(),
  createdAt: iso,
  updatedAt: iso,
};
const HumanView = z.object({
  ...common,
  type: z.literal("human"),
  email: z.string().nullable(),
  emailVerified: z.boolean(),
  givenName: z.string().nullable(),
  familyName: z.string().nullable(),
  nickname: z.string().nullable(),
  locale: z.string().nullable(),
  phone: z.string().nullable(),
  phoneVerified: z.boolean(),
  address: address.nullable(),
  passwordChangeRequired: z.boolean(),
});
const MachineView = z.object({
  ...common,
  type: z.literal("machine"),
  name: z.string().nullable(),
  description: z.string().nullable(),
});
const UserView = named("User", z.discriminatedUnion("type", [HumanView, MachineView]));
const UserList = named(
  "UserList",
  z.object({ users: z.array(UserView), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
);
const UserQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(50),
  offset: z.coerce.number().int().min(0).default(0),
  search: z.string().trim().max(200).optional().describe("Part of the username or email, case-insensitive."),
  type: z.enum(["human", "machine"]).optional(),
  ids: z
    .string()
    .transform((s) => [...new Set(s.split(",").map((id) => id.trim()).filter(Boolean))])
    .pipe(z.array(z.string().max(200)).min(1).max(50))
    .optional()
    .describe("Only these users: up to 50 ids, comma-separated (e.g. to name the actors of an audit page in one call)."),
});

const KeyCreate = named(
  "MachineKeyCreate",
  z.strictObject({
    publicKey: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("A public JWK (RSA >= 2048 bits, EC P-256/P-384/P-521, OKP Ed25519/Ed448) to register. Leave out to have a key pair generated."),
    expiresAt: futureDate.optional(),
  }),
);
const KeyView = named(
  "MachineKey",
  z.object({
    keyId: z.string().describe("Also the kid of the key: JWTs signed with it carry it in their header."),
    userId: z.string(),
    alg: z.string(),
    publicKey: z.record(z.string(), z.unknown()),
    createdAt: iso,
    expiresAt: iso.nullable(),
  }),
);
const KeyCreated = named(
  "MachineKeyCreated",
  KeyView.extend({
    privateKey: z.record(z.string(), z.unknown()).optional().describe("Only for a generated key, and only in this response."),
  }),
);
const KeyList = named("MachineKeyList", z.object({ keys: z.array(KeyView) }));

const PatCreate = named("PatCreate", z.strictObject({ expiresAt: futureDate.optional() }));
const PatInfo = z.object({ id: z.string(), createdAt: iso, expiresAt: iso.nullable(), lastUsedAt: iso.nullable() });
const PatCreated = named(
  "PatCreated",
  z.object({ id: z.string(), token: z.string().describe("Shown only in this response."), expiresAt: iso.nullable() }),
);
const PatList = named("PatList", z.object({ pats: z.array(PatInfo) }));
const ConsentList = named(
  "ConsentList",
  z.object({
    consents: z.array(
      z.object({
        clientId: z.string(),
        clientName: z.string(),
        scopes: z.array(z.string()).describe("The OpenID Connect scopes allowed."),
        apis: z.record(z.string(), z.array(z.string())).describe("The APIs allowed, by identifier, with the scopes allowed there."),
        grantedAt: iso,
      }),
    ),
  }),
);
const PasswordSet = named(
  "PasswordSet",
  z.strictObject({
    password: z.string(),
    passwordChangeRequired: z
      .boolean()
      .default(false)
      .describe("The user must replace this password at the next sign-in (a temporary password). Otherwise setting it ends any such demand."),
  }),
);

// ---- views ----

const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

function userView(u: User, primaryDomain: string): z.infer<typeof UserView> {
  const base = {
    id: u.id,
    username: u.username,
    loginName: loginNameOf(u, primaryDomain),
    roles: u.roles as (typeof ROLES)[number][],
    locked: u.locked,
    createdAt: u.createdAt.toISOString(),
    updatedAt: u.updatedAt.toISOString(),
  };
  if (u.type === "machine") return { ...base, type: "machine", name: u.name, description: u.description };
  return {
    ...base,
    type: "human",
    email: u.email,
    emailVerified: u.emailVerified,
    givenName: u.givenName,
    familyName: u.familyName,
    nickname: u.nickname,
    locale: u.locale,
    phone: u.phone,
    phoneVerified: u.phoneVerified,
    address: u.address ?? null,
    passwordChangeRequired: u.passwordChangeRequiredSince !== null,
  };
}

/** The stored form of the API's `passwordChangeRequired`: since when (lib/login/signin-policy.ts says why). */
function changeRequiredSince<T extends { passwordChangeRequired?: boolean }>(
  fields: T,
  now: Date,
  current: Date | null = null,
): Omit<T, "passwordChangeRequired"> & { passwordChangeRequiredSince?: Date | null } {
  const { passwordChangeRequired, ...rest } = fields;
  if (passwordChangeRequired === undefined) return rest;
  return { ...rest, passwordChangeRequiredSince: passwordChangeRequired ? (current ?? now) : null };
}

function keyView(k: MachineKey): z.infer<typeof KeyView> {
  return {
    keyId: k.id,
    userId: k.userId,
    alg: k.alg,
    publicKey: k.publicJwk,
    createdAt: k.createdAt.toISOString(),
    expiresAt: isoOrNull(k.expiresAt),
  };
}

// ---- helpers ----

async function policyProblems(db: Executor, password: string): Promise<FieldError[]> {
  const policy = (await readSettings(db))!.passwordPolicy;
  return checkPasswordPolicy(password, policy).map((v) => ({
    path: "password",
    code: `password_${v.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`,
    message: `Password ${describePolicyViolation(v, policy)}.`,
    ...(v === "minLength" ? { params: { minimum: policy.minLength } } : {}),
  }));
}

/** The cached active tokens (lib/store/caches.ts) carry their user. */
const USER_TOKENS_STALE: Invalidation[] = [{ cache: "accessTokens" }];

const taken = (name: string) =>
  conflict("A user with this username exists already.", [
    { path: "username", code: "username_taken", message: `The username ${JSON.stringify(name)} is taken (usernames are case-insensitive).` },
  ]);

/** The instance must keep at least one unlocked administrator, or nobody could manage it again. */
async function ensureAnotherAdmin(db: Executor, userId: string): Promise<void> {
  if ((await countOtherActiveAdmins(db, userId)) === 0) {
    const message = "This is the last unlocked administrator: grant the admin role to another user first.";
    throw conflict(message, [{ path: "", code: "last_admin", message }]);
  }
}

async function load(ctx: Ctx): Promise<User> {
  const user = await getUser(ctx.db, ctx.params.userId!);
  if (!user) throw notFound("user");
  return user;
}

async function domain(ctx: Ctx): Promise<string> {
  return (await getSettings(ctx.inst)).primaryDomain;
}

function audit(ctx: Ctx, tx: Executor, action: string, userId: string, details?: Record<string, unknown>) {
  return recordAudit(tx, ctx.actor, { action, targetType: "user", targetId: userId, details });
}

// ---- routes ----

export const userRoutes = [
  route({
    method: "POST",
    path: "/users",
    operationId: "createUser",
    summary: 'Create a human user (type "human", the default) or a machine user (type "machine").',
    tag: "users",
    body: named("UserCreate", UserCreate),
    success: { status: 201, description: "The user.", schema: UserView },
    errors: [409],
    async handler(ctx, body) {
      let data: NewUser;
      let password: string | undefined;
      if (body.type === "machine") {
        const { type, ...f } = body;
        data = { ...f, type, name: f.name ?? f.username };
      } else {
        const { type: _, password: pw, ...f } = body;
        if (pw !== undefined) {
          const problems = await policyProblems(ctx.db, pw);
          if (problems.length) throw invalidFields(problems);
        }
        data = { ...changeRequiredSince(f, dateOf(ctx.inst.clock)), type: "human" };
        password = pw;
      }
      try {
        const user = await ctx.db.transaction(async (tx) => {
          const u = await insertUser(tx, data, password);
          await audit(ctx, tx, "user.created", u.id, { type: u.type, username: u.username, roles: u.roles });
          if (password !== undefined) await audit(ctx, tx, "user.password_set", u.id);
          if (u.passwordChangeRequiredSince) await audit(ctx, tx, "user.password_change_required", u.id);
          return u;
        });
        return userView(user, await domain(ctx));
      } catch (err) {
        if (err instanceof DuplicateUsername) throw taken(data.username);
        throw err;
      }
    },
  }),
  route({
    method: "GET",
    path: "/users",
    operationId: "listUsers",
    summary: "List users by username, paged; search matches username or email.",
    tag: "users",
    query: UserQuery,
    success: { status: 200, description: "One page of users.", schema: UserList },
    async handler(ctx, _body, q) {
      const { users, total } = await listUsers(ctx.db, q);
      const d = await domain(ctx);
      return { users: users.map((u) => userView(u, d)), total, limit: q.limit, offset: q.offset };
    },
  }),
  route({
    method: "GET",
    path: "/users/{userId}",
    operationId: "getUser",
    summary: "Get a user.",
    tag: "users",
    success: { status: 200, description: "The user.", schema: UserView },
    errors: [404],
    async handler(ctx) {
      return userView(await load(ctx), await domain(ctx));
    },
  }),
  route({
    method: "PATCH",
    path: "/users/{userId}",
    operationId: "updateUser",
    summary:
      "Change some fields of a user (the fields of its type). Changing email or phone resets its verified flag unless given too; a new email address not marked verified is mailed a verification code (unless verification is off). Passwords are set with POST /users/{userId}/password.",
    tag: "users",
    bodyDoc: z.union([HumanPatch, MachinePatch]),
    success: { status: 200, description: "The updated user.", schema: UserView },
    errors: [404, 409],
    async handler(ctx) {
      const current = await load(ctx);
      // A demand for a new password keeps the moment it was first made (sessions signed in since are asked).
      const patch: Partial<NewUser> =
        current.type === "machine" ? parseWith(MachinePatch, ctx.rawBody) : changeRequiredSince(parseWith(HumanPatch, ctx.rawBody), dateOf(ctx.inst.clock), current.passwordChangeRequiredSince);
      if (current.type === "human") {
        if (patch.email !== undefined && patch.email !== current.email && patch.emailVerified === undefined) {
          patch.emailVerified = false;
        }
        if (patch.phone !== undefined && patch.phone !== current.phone && patch.phoneVerified === undefined) {
          patch.phoneVerified = false;
        }
      }
      try {
        // Introspection and userinfo answer from cached tokens, which carry the user: a change
        // (a lock above all) drops them when it commits, on every instance.
        const user = await mutate(ctx.inst, USER_TOKENS_STALE, async (tx) => {
          const u = await updateUser(tx, current.id, patch, dateOf(ctx.inst.clock));
          await audit(ctx, tx, "user.updated", current.id, { fields: Object.keys(patch) });
          if (patch.roles && patch.roles.join() !== current.roles.join()) {
            await audit(ctx, tx, "user.roles_changed", current.id, { from: current.roles, to: patch.roles });
          }
          const required = patch.passwordChangeRequiredSince;
          if (required !== undefined && (required === null) !== (current.passwordChangeRequiredSince === null)) {
            await audit(ctx, tx, required ? "user.password_change_required" : "user.password_change_waived", current.id);
          }
          if (patch.locked !== undefined && patch.locked !== current.locked) {
            await audit(ctx, tx, patch.locked ? "user.locked" : "user.unlocked", current.id);
            if (patch.locked) await cutOffUser(tx, current.id, "user_locked", dateOf(ctx.inst.clock));
          }
          const staysAdmin = isActiveAdmin({ roles: patch.roles ?? current.roles, locked: patch.locked ?? current.locked });
          if (isActiveAdmin(current) && !staysAdmin) await ensureAnotherAdmin(tx, current.id);
          return u!;
        });
        // A new address that is not marked verified gets its verification mail (unless the policy is off).
        if (user.type === "human" && user.email && user.email !== current.email && !user.emailVerified) await sendEmailVerification(ctx.inst, user, ctx.actor, null);
        return userView(user, await domain(ctx));
      } catch (err) {
        if (err instanceof DuplicateUsername) throw taken(patch.username ?? "");
        throw err;
      }
    },
  }),
  route({
    method: "DELETE",
    path: "/users/{userId}",
    operationId: "deleteUser",
    summary: "Delete a user with its password, keys, PATs and sessions.",
    tag: "users",
    success: { status: 204, description: "Deleted." },
    errors: [404],
    async handler(ctx) {
      const id = ctx.params.userId!;
      const current = await load(ctx);
      await mutate(ctx.inst, USER_TOKENS_STALE, async (tx) => {
        if (isActiveAdmin(current)) await ensureAnotherAdmin(tx, id);
        await cutOffUser(tx, id, "user_deleted", dateOf(ctx.inst.clock));
        if (!(await deleteUser(tx, id))) throw notFound("user");
        await audit(ctx, tx, "user.deleted", id);
      });
      return undefined;
    },
  }),
  route({
    method: "POST",
    path: "/users/{userId}/password",
    operationId: "setUserPassword",
    summary: "Set the password of a human user (checked against the password policy); with passwordChangeRequired the user must replace it at the next sign-in.",
    tag: "users",
    body: PasswordSet,
    success: { status: 204, description: "Set." },
    errors: [404],
    async handler(ctx, body) {
      const user = await load(ctx);
      if (user.type !== "human") throw invalid("Machine users have no password; use keys or PATs.");
      const problems = await policyProblems(ctx.db, body.password);
      if (problems.length) throw invalidFields(problems);
      await ctx.db.transaction(async (tx) => {
        // Setting a password ends any demand for a new one; a temporary password makes a new one.
        await setPassword(tx, user.id, body.password, { changeRequired: body.passwordChangeRequired, now: dateOf(ctx.inst.clock) });
        await audit(ctx, tx, "user.password_set", user.id, { passwordChangeRequired: body.passwordChangeRequired });
      });
      return undefined;
    },
  }),
  route({
    method: "POST",
    path: "/users/{userId}/keys",
    operationId: "addMachineKey",
    summary:
      "Register a public key of a machine user ({publicKey}), or generate an RS256 key pair ({}): the private JWK is in this response only.",
    tag: "users",
    body: KeyCreate,
    success: { status: 201, description: "The key; privateKey only when generated.", schema: KeyCreated },
    errors: [404],
    async handler(ctx, body) {
      const expiresAt = future(ctx, body.expiresAt);
      const user = await load(ctx);
      if (user.type !== "machine") throw invalid("Keys belong to machine users.");
      const keyId = randomId();
      let publicJwk: Record<string, unknown>;
      let alg: string;
      let privateKey: Record<string, unknown> | undefined;
      if (body.publicKey) {
        const checked = checkPublicJwk(body.publicKey);
        if ("code" in checked) throw invalidFields([{ path: "publicKey", ...checked, message: `The key ${checked.message}.` }]);
        ({ alg } = checked);
        publicJwk = { ...checked.jwk, kid: keyId };
      } else {
        alg = "RS256";
        const pair = await generateKeyPair(alg, { modulusLength: 2048, extractable: true });
        const pub = await exportJWK(pair.publicKey);
        publicJwk = { kty: pub.kty, n: pub.n, e: pub.e, kid: keyId, alg, use: "sig" };
        privateKey = { ...(await exportJWK(pair.privateKey)), kid: keyId, alg, use: "sig" };
      }
      const key = await ctx.db.transaction(async (tx) => {
        const k = await insertMachineKey(tx, user.id, publicJwk, alg, expiresAt, keyId);
        await audit(ctx, tx, "user.key_added", user.id, { keyId, alg, generated: !body.publicKey });
        return k;
      });
      return { ...keyView(key), ...(privateKey ? { privateKey } : {}) };
    },
  }),
  route({
    method: "GET",
    path: "/users/{userId}/keys",
    operationId: "listMachineKeys",
    summary: "List the public keys of a user.",
    tag: "users",
    success: { status: 200, description: "The keys.", schema: KeyList },
    errors: [404],
    async handler(ctx) {
      const user = await load(ctx);
      return { keys: (await listMachineKeys(ctx.db, user.id)).map(keyView) };
    },
  }),
  route({
    method: "DELETE",
    path: "/users/{userId}/keys/{keyId}",
    operationId: "deleteMachineKey",
    summary: "Remove a key; JWTs signed with it are no longer accepted.",
    tag: "users",
    success: { status: 204, description: "Removed." },
    errors: [404],
    async handler(ctx) {
      const { userId, keyId } = ctx.params as { userId: string; keyId: string };
      await ctx.db.transaction(async (tx) => {
        if (!(await deleteMachineKey(tx, userId, keyId))) throw notFound("key");
        await audit(ctx, tx, "user.key_removed", userId, { keyId });
      });
      return undefined;
    },
  }),
  route({
    method: "POST",
    path: "/users/{userId}/pats",
    operationId: "createPat",
    summary: "Create a personal access token; the token is in this response only.",
    tag: "users",
    body: PatCreate,
    success: { status: 201, description: "The token.", schema: PatCreated },
    errors: [404],
    async handler(ctx, body) {
      const expiresAt = future(ctx, body.expiresAt);
      const user = await load(ctx);
      const token = generatePat();
      const pat = await ctx.db.transaction(async (tx) => {
        const p = await insertPat(tx, user.id, token, expiresAt);
        await audit(ctx, tx, "user.pat_created", user.id, { patId: p.id });
        return p;
      });
      return { id: pat.id, token, expiresAt: isoOrNull(pat.expiresAt) };
    },
  }),
  route({
    method: "GET",
    path: "/users/{userId}/pats",
    operationId: "listPats",
    summary: "List the personal access tokens of a user (metadata only).",
    tag: "users",
    success: { status: 200, description: "The tokens' metadata.", schema: PatList },
    errors: [404],
    async handler(ctx) {
      const user = await load(ctx);
      const pats = await listPats(ctx.db, user.id);
      return {
        pats: pats.map((p) => ({
          id: p.id,
          createdAt: p.createdAt.toISOString(),
          expiresAt: isoOrNull(p.expiresAt),
          lastUsedAt: isoOrNull(p.lastUsedAt),
        })),
      };
    },
  }),
  route({
    method: "DELETE",
    path: "/users/{userId}/pats/{patId}",
    operationId: "deletePat",
    summary: "Revoke a personal access token.",
    tag: "users",
    success: { status: 204, description: "Revoked." },
    errors: [404],
    async handler(ctx) {
      const { userId, patId } = ctx.params as { userId: string; patId: string };
      await ctx.db.transaction(async (tx) => {
        if (!(await deletePat(tx, userId, patId))) throw notFound("personal access token");
        await audit(ctx, tx, "user.pat_revoked", userId, { patId });
      });
      return undefined;
    },
  }),
  route({
    method: "GET",
    path: "/users/{userId}/consents",
    operationId: "listConsents",
    summary: "The third-party applications the user allowed, with the scopes, most recent first.",
    tag: "users",
    success: { status: 200, description: "The user's consents.", schema: ConsentList },
    errors: [404],
    async handler(ctx) {
      const user = await load(ctx);
      const list = await listUserConsents(ctx.db, user.id);
      return { consents: list.map((c) => ({ ...c, grantedAt: c.grantedAt.toISOString() })) };
    },
  }),
  route({
    method: "DELETE",
    path: "/users/{userId}/consents/{clientId}",
    operationId: "revokeConsent",
    summary: "Withdraw a consent: the application asks again next time, and its tokens for the user (refresh tokens included) are revoked.",
    tag: "users",
    success: { status: 204, description: "Withdrawn." },
    errors: [404],
    async handler(ctx) {
      const user = await load(ctx);
      const clientId = ctx.params.clientId!;
      await mutate(ctx.inst, USER_TOKENS_STALE, async (tx) => {
        if (!(await revokeConsent(tx, user.id, clientId, dateOf(ctx.inst.clock)))) throw notFound("consent");
        await recordAudit(tx, ctx.actor, { action: "consent.revoked", targetType: "user", targetId: user.id, clientId, details: {} });
      });
      return undefined;
    },
  }),
];
