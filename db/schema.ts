import { sql } from "drizzle-orm";
import {
  bigserial,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

/**
 * The whole persistent state of Torii. One PostgreSQL dialect for PGlite and server PostgreSQL.
 * Secrets never appear in clear: every token, code, secret and PAT column holds a SHA-256 hash
 * (or an argon2id hash for passwords); private signing keys are AES-256-GCM encrypted.
 */

const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (v) => Buffer.from(v),
});

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });
const created = () => ts("created_at").notNull().defaultNow();

export type Features = { tokenExchange: boolean; impersonation: boolean };
export type Branding = {
  productName: string;
  primaryColor: string;
  backgroundColor: string;
  darkMode: "light" | "dark" | "auto";
};
/**
 * Failed sign-ins (lib/login/lockout.ts). Failures count in a sliding window; past the free ones,
 * each further try of the same account from the same address (or of any account from the same
 * address) waits a delay that doubles per failure up to `maxDelaySeconds`. An account is locked
 * for `lockSeconds` only after `lockAfterFailures` failures from browsers that never signed in to
 * it; a browser that did (device cookie) keeps trying.
 */
export type LockoutPolicy = {
  windowSeconds: number;
  freeFailures: number;
  addressFreeFailures: number;
  maxDelaySeconds: number;
  lockAfterFailures: number;
  lockSeconds: number;
};
/** How long records are kept once they no longer decide anything (lib/maintenance.ts). */
export type Retention = { auditDays: number };
/**
 * The console's mail server. `passwordEnc`: the password sealed with the master key (never
 * returned); `security`: `tls` (implicit, usually 465), `starttls` (required upgrade, usually 587)
 * or `none` (only for a local relay).
 */
export type SmtpSettings = {
  host: string;
  port: number;
  security: "tls" | "starttls" | "none";
  user: string | null;
  passwordEnc: string | null;
  fromAddress: string;
  fromName: string | null;
};
/**
 * Self-service account policy: self-registration, how long a password reset link works, and email
 * verification (`off`: nothing is mailed; `optional`: a code is mailed, sign-in does not wait for
 * it; `required`: sign-in completes only with a verified address). Rows from before a field get
 * its default where they are read (lib/store/settings.ts `accountPolicyOf`).
 */
export type AccountPolicy = {
  registration: boolean;
  passwordResetLinkSeconds: number;
  emailVerification?: "off" | "optional" | "required";
  /** Whether the registration page asks for the given and family name. */
  registrationNames?: RegistrationNames;
  /**
   * Second factors: `off` (none offered or asked), `optional` (users may enrol one; who has one
   * is asked for it at every sign-in), `required` (every sign-in needs one; enrolment is part of
   * the next sign-in of a user without one).
   */
  mfa?: MfaPolicy;
};
export type MfaPolicy = "off" | "optional" | "required";
export type RegistrationNames = "required" | "optional" | "hidden";
export type PasswordPolicy = {
  minLength: number;
  requireUppercase: boolean;
  requireLowercase: boolean;
  requireNumber: boolean;
  requireSymbol: boolean;
  /** Days a password may be used before the next sign-in asks for a new one; 0 or absent: no limit. */
  maxAgeDays?: number;
};
export type Lifetimes = {
  accessToken: number;
  idToken: number;
  refreshToken: number;
  authCode: number;
  sessionIdle: number;
  sessionAbsolute: number;
  /**
   * Seconds after a rotation during which the rotated refresh token still gets the same successor
   * (0-60; absent = 0, strict reuse detection). Not a lifetime, but a duration of the refresh
   * token's life that belongs with them; exposed as `refreshTokenReuseIntervalSeconds`.
   */
  refreshTokenReuseInterval?: number;
};
export type RateLimits = { jwksPerMinute: number; tokenPerMinute: number; registrationPerHour: number };
export type Address = {
  streetAddress?: string | null;
  locality?: string | null;
  region?: string | null;
  postalCode?: string | null;
  country?: string | null;
};

/** Exactly one row (id = 1): the instance-wide settings. */
export const instanceSettings = pgTable("instance_settings", {
  id: integer("id").primaryKey().default(1),
  primaryDomain: text("primary_domain").notNull(),
  defaultLocale: text("default_locale").notNull().default("en"),
  lifetimes: jsonb("lifetimes").$type<Lifetimes>().notNull(),
  features: jsonb("features").$type<Features>().notNull(),
  branding: jsonb("branding").$type<Branding>().notNull(),
  lockoutPolicy: jsonb("lockout_policy").$type<LockoutPolicy>().notNull(),
  passwordPolicy: jsonb("password_policy").$type<PasswordPolicy>().notNull(),
  rateLimits: jsonb("rate_limits").$type<RateLimits>().notNull(),
  retention: jsonb("retention").$type<Retention>().notNull().default({ auditDays: 90 }),
  smtp: jsonb("smtp").$type<SmtpSettings | null>(),
  accountPolicy: jsonb("account_policy").$type<AccountPolicy>().notNull().default({ registration: true, passwordResetLinkSeconds: 3600 }),
  logo: bytea("logo"),
  logoContentType: text("logo_content_type"),
  /** HMAC of a constant under the master key: detects an instance started with the wrong key. */
  masterKeyCheck: text("master_key_check").notNull(),
  createdAt: created(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

export const clients = pgTable("clients", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  redirectUris: text("redirect_uris").array().notNull().default(sql`'{}'::text[]`),
  postLogoutRedirectUris: text("post_logout_redirect_uris").array().notNull().default(sql`'{}'::text[]`),
  responseTypes: text("response_types").array().notNull(),
  grantTypes: text("grant_types").array().notNull(),
  authMethod: text("auth_method").notNull(),
  jwks: jsonb("jwks").$type<{ keys: Record<string, unknown>[] } | null>(),
  accessTokenType: text("access_token_type").notNull().default("jwt"),
  idTokenUserinfoAssertion: boolean("id_token_userinfo_assertion").notNull().default(false),
  accessTokenLifetime: integer("access_token_lifetime").notNull(),
  idTokenLifetime: integer("id_token_lifetime").notNull(),
  refreshTokenLifetime: integer("refresh_token_lifetime").notNull(),
  /** SHA-256 of a 256-bit random secret, base64url. Null for public and private_key_jwt clients. */
  secretHash: text("secret_hash"),
  /**
   * Web origins whose pages may call the token, revocation, userinfo and introspection endpoints
   * (CORS). Null: the origins of the redirect URIs (lib/oauth/cors.ts).
   */
  allowedOrigins: text("allowed_origins").array(),
  /**
   * First-party applications (the default, and every client registered before consent existed)
   * get the user's data without a consent screen; third-party ones only after the user allowed it.
   */
  firstParty: boolean("first_party").notNull().default(true),
  /** The APIs (by identifier) and their scopes this client may ask tokens for. */
  apiScopes: jsonb("api_scopes").$type<Record<string, string[]>>().notNull().default({}),
  createdAt: created(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    type: text("type").$type<"human" | "machine">().notNull(),
    username: text("username").notNull(),
    email: text("email"),
    emailVerified: boolean("email_verified").notNull().default(false),
    givenName: text("given_name"),
    familyName: text("family_name"),
    nickname: text("nickname"),
    /** Display name of a machine user. */
    name: text("name"),
    description: text("description"),
    locale: text("locale"),
    phone: text("phone"),
    phoneVerified: boolean("phone_verified").notNull().default(false),
    address: jsonb("address").$type<Address | null>(),
    roles: text("roles").array().notNull().default(sql`'{}'::text[]`),
    locked: boolean("locked").notNull().default(false),
    /**
     * Since when an administrator requires a new password (null: not required). A moment, not a
     * flag, so that the sign-in policy asks only sessions signed in since (lib/login/signin-policy.ts).
     */
    passwordChangeRequiredSince: ts("password_change_required_since"),
    createdAt: created(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("users_username_lower_idx").on(sql`lower(${t.username})`),
    index("users_email_lower_idx").on(sql`lower(${t.email})`),
  ],
);

export const passwordCredentials = pgTable("password_credentials", {
  userId: text("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  /** argon2id PHC string. */
  hash: text("hash").notNull(),
  changedAt: ts("changed_at").notNull().defaultNow(),
});

export const machineKeys = pgTable(
  "machine_keys",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    publicJwk: jsonb("public_jwk").$type<Record<string, unknown>>().notNull(),
    alg: text("alg").notNull(),
    createdAt: created(),
    expiresAt: ts("expires_at"),
  },
  (t) => [index("machine_keys_user_idx").on(t.userId)],
);

export const personalAccessTokens = pgTable(
  "personal_access_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    createdAt: created(),
    expiresAt: ts("expires_at"),
    lastUsedAt: ts("last_used_at"),
  },
  (t) => [uniqueIndex("pats_token_hash_idx").on(t.tokenHash), index("pats_user_idx").on(t.userId)],
);

export const signingKeys = pgTable("signing_keys", {
  kid: text("kid").primaryKey(),
  alg: text("alg").notNull(),
  publicJwk: jsonb("public_jwk").$type<Record<string, unknown>>().notNull(),
  /** AES-256-GCM under the master key: base64url(iv).base64url(tag).base64url(ciphertext). */
  privateJwkEncrypted: text("private_jwk_encrypted").notNull(),
  status: text("status").$type<"active" | "retired">().notNull(),
  createdAt: created(),
  retiredAt: ts("retired_at"),
  /** Once retired: when the last token this key signed has expired, so it may leave the key set. */
  removeAfter: ts("remove_after"),
});

/** A browser (user agent), named by an opaque cookie stored here by hash. */
export const userAgents = pgTable("user_agents", {
  id: text("id").primaryKey(),
  cookieHash: text("cookie_hash").notNull().unique(),
  createdAt: created(),
  lastSeenAt: ts("last_seen_at").notNull().defaultNow(),
});

/** One authenticated user inside one user agent; a user agent may hold several. */
export const sessions = pgTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    userAgentId: text("user_agent_id")
      .notNull()
      .references(() => userAgents.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    authTime: ts("auth_time").notNull(),
    amr: text("amr").array().notNull().default(sql`'{}'::text[]`),
    createdAt: created(),
    lastActiveAt: ts("last_active_at").notNull().defaultNow(),
    idleExpiresAt: ts("idle_expires_at").notNull(),
    absoluteExpiresAt: ts("absolute_expires_at").notNull(),
    endedAt: ts("ended_at"),
    /**
     * Where the latest sign-in of this session came from: the client address and the browser's
     * User-Agent (at most 512 characters), so that the account page can tell the user's sessions
     * apart ("Firefox on Windows, 203.0.113.7"). Null for sessions from before they were kept.
     */
    ip: text("ip"),
    userAgent: text("user_agent"),
  },
  (t) => [index("sessions_user_agent_idx").on(t.userAgentId), index("sessions_user_idx").on(t.userId)],
);

/**
 * A grant: the consent event behind a set of tokens (one authorization code, one token-endpoint
 * call without a code). Revoking a grant revokes everything issued from it.
 */
export const grants = pgTable(
  "grants",
  {
    id: text("id").primaryKey(),
    clientId: text("client_id").notNull(),
    userId: text("user_id"),
    sessionId: text("session_id"),
    grantType: text("grant_type").notNull(),
    scopes: text("scopes").array().notNull(),
    /** User claims asked for by name with the `claims` parameter (OIDC Core 5.5), kept for refreshes and userinfo. */
    claims: jsonb("claims").$type<{ idToken: string[]; userinfo: string[] } | null>(),
    /** API identifiers the grant covers (RFC 8707 `resource` at the authorization request). */
    resources: text("resources").array().notNull().default(sql`'{}'::text[]`),
    createdAt: created(),
    expiresAt: ts("expires_at").notNull(),
    revokedAt: ts("revoked_at"),
  },
  (t) => [index("grants_session_idx").on(t.sessionId), index("grants_client_user_idx").on(t.clientId, t.userId)],
);

export const authorizationCodes = pgTable("authorization_codes", {
  codeHash: text("code_hash").primaryKey(),
  grantId: text("grant_id").notNull(),
  clientId: text("client_id").notNull(),
  userId: text("user_id").notNull(),
  sessionId: text("session_id"),
  redirectUri: text("redirect_uri").notNull(),
  scopes: text("scopes").array().notNull(),
  nonce: text("nonce"),
  codeChallenge: text("code_challenge"),
  codeChallengeMethod: text("code_challenge_method"),
  authTime: ts("auth_time").notNull(),
  amr: text("amr").array().notNull().default(sql`'{}'::text[]`),
  createdAt: created(),
  expiresAt: ts("expires_at").notNull(),
  usedAt: ts("used_at"),
});

/** A chain of rotated refresh tokens; reuse of a rotated member revokes the family. */
export const refreshTokenFamilies = pgTable(
  "refresh_token_families",
  {
    id: text("id").primaryKey(),
    grantId: text("grant_id").notNull(),
    clientId: text("client_id").notNull(),
    userId: text("user_id"),
    sessionId: text("session_id"),
    scopes: text("scopes").array().notNull(),
    authTime: ts("auth_time"),
    amr: text("amr").array().notNull().default(sql`'{}'::text[]`),
    actor: jsonb("actor").$type<Record<string, unknown> | null>(),
    /**
     * For a family from a token exchange: the expiry of its subject and actor tokens. No token of
     * the family, nor any access or ID token its refreshes give, is valid after it.
     */
    notAfter: ts("not_after"),
    createdAt: created(),
    expiresAt: ts("expires_at").notNull(),
    revokedAt: ts("revoked_at"),
    revokedReason: text("revoked_reason"),
    /**
     * The client address the family was last refreshed from; null until its first refresh. A
     * refresh is audited when it comes from another address than this (lib/oauth/grants/refresh-token.ts).
     */
    lastRefreshIp: text("last_refresh_ip"),
  },
  (t) => [index("rtf_grant_idx").on(t.grantId)],
);

/**
 * Issued tokens that have server-side state: opaque access tokens and refresh tokens (looked up
 * by hash). JWT access tokens are not written here when issued; they are checked against
 * `token_revocations` instead, which keeps the token endpoint free of writes for JWTs.
 */
export const tokens = pgTable(
  "tokens",
  {
    id: text("id").primaryKey(),
    kind: text("kind").$type<"access" | "refresh">().notNull(),
    tokenHash: text("token_hash").notNull(),
    clientId: text("client_id").notNull(),
    userId: text("user_id"),
    sessionId: text("session_id"),
    grantId: text("grant_id").notNull(),
    familyId: text("family_id"),
    scopes: text("scopes").array().notNull(),
    audience: text("audience").array().notNull(),
    actor: jsonb("actor").$type<Record<string, unknown> | null>(),
    createdAt: created(),
    expiresAt: ts("expires_at").notNull(),
    revokedAt: ts("revoked_at"),
    /** For refresh tokens: set when exchanged for a successor; presenting it again is reuse. */
    rotatedAt: ts("rotated_at"),
  },
  (t) => [
    uniqueIndex("tokens_hash_idx").on(t.tokenHash),
    // Each index is work on every token issued, so only what is looked up has one: a token by its
    // hash, a family's tokens (the sweep). Nothing finds tokens by grant or session: revoking
    // those marks the grant and its families (lib/store/grants.ts), which every use of a token
    // checks, so the rows themselves need no update. Partial: rows of kind `access` left by
    // earlier versions have no family.
    index("tokens_family_idx").on(t.familyId).where(sql`${t.familyId} IS NOT NULL`),
  ],
);

/** Revocations of access tokens (JWT or sealed opaque: neither is stored), by token id, grant, session or API. */
export const tokenRevocations = pgTable(
  "token_revocations",
  {
    subjectType: text("subject_type").$type<"jti" | "grant" | "session" | "audience">().notNull(),
    subjectId: text("subject_id").notNull(),
    reason: text("reason").notNull(),
    createdAt: created(),
    /** After this nothing it covers can still be valid, so the row may be purged. */
    expiresAt: ts("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.subjectType, t.subjectId] })],
);

/** `jti`s of client assertions and JWT grants already accepted: each is accepted once. */
export const usedJtis = pgTable(
  "used_jtis",
  {
    issuer: text("issuer").notNull(),
    jti: text("jti").notNull(),
    expiresAt: ts("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.issuer, t.jti] })],
);

/**
 * One failed password check (lib/login/lockout.ts): counted in sliding windows per account and
 * address, per address, and per account from untrusted browsers. Purged once older than the
 * lockout window.
 */
export const loginFailures = pgTable(
  "login_failures",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    /** `user:<id>` for a known user, `name:<sha256 of the name>` otherwise. */
    accountKey: text("account_key").notNull(),
    address: text("address").notNull(),
    /** From a browser holding this user's device cookie: it does not count toward the account lock. */
    trusted: boolean("trusted").notNull().default(false),
    at: ts("at").notNull(),
  },
  (t) => [
    index("login_failures_account_idx").on(t.accountKey, t.at),
    index("login_failures_address_idx").on(t.address, t.at),
    index("login_failures_at_idx").on(t.at),
  ],
);

/** An account locked after too many failures from untrusted browsers, until `lockedUntil`. */
export const accountLockouts = pgTable(
  "account_lockouts",
  {
    accountKey: text("account_key").primaryKey(),
    /** The user, when the key names one (unknown names lock alike, so a lock reveals nothing). */
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    lockedAt: ts("locked_at").notNull(),
    lockedUntil: ts("locked_until").notNull(),
  },
  (t) => [index("account_lockouts_user_idx").on(t.userId)],
);

/** Fixed-window counters shared by every instance (key set, token endpoint, login attempts). */
export const rateLimitCounters = pgTable("rate_limit_counters", {
  key: text("key").primaryKey(),
  windowStart: ts("window_start").notNull(),
  count: integer("count").notNull(),
  expiresAt: ts("expires_at").notNull(),
});

export const auditEvents = pgTable(
  "audit_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    occurredAt: ts("occurred_at").notNull().defaultNow(),
    /** `user`, `client`, `system`. */
    actorType: text("actor_type").notNull(),
    actorId: text("actor_id"),
    action: text("action").notNull(),
    targetType: text("target_type"),
    targetId: text("target_id"),
    clientId: text("client_id"),
    ip: text("ip"),
    userAgent: text("user_agent"),
    details: jsonb("details").$type<Record<string, unknown>>(),
  },
  (t) => [
    index("audit_occurred_idx").on(t.occurredAt),
    index("audit_action_idx").on(t.action),
    // The audit log is read by who acted and by what was acted on, whatever its type: the
    // console's `actorId` and `targetId` filters, and the account page's events of one user (its
    // actor or its target). An index led by `target_type` served none of them, so each of those
    // reads scanned every event kept (90 days by default).
    index("audit_actor_idx").on(t.actorId),
    index("audit_target_idx").on(t.targetId),
    // The console's `clientId` filter. Every index is a write on every event, but a small one: an
    // event's insert on PGlite took about 40 µs with no secondary index, and 44 to 52 with these
    // five as with four (alternating runs); the statement's own overhead is most of it.
    index("audit_client_idx").on(t.clientId),
  ],
);

/**
 * An authorization request waiting for the user to sign in, kept server-side so that the login
 * pages never round-trip (tamperable) protocol parameters. Referenced by an unguessable id that
 * is stored here only as a hash, and bound to the user agent that started it.
 */
export const authRequests = pgTable(
  "auth_requests",
  {
    idHash: text("id_hash").primaryKey(),
    userAgentId: text("user_agent_id")
      .notNull()
      .references(() => userAgents.id, { onDelete: "cascade" }),
    clientId: text("client_id").notNull(),
    redirectUri: text("redirect_uri").notNull(),
    responseType: text("response_type").notNull(),
    responseMode: text("response_mode").notNull(),
    scopes: text("scopes").array().notNull(),
    state: text("state"),
    nonce: text("nonce"),
    codeChallenge: text("code_challenge"),
    codeChallengeMethod: text("code_challenge_method"),
    prompt: text("prompt").array().notNull().default(sql`'{}'::text[]`),
    maxAge: integer("max_age"),
    loginHint: text("login_hint"),
    /** `sub` of a verified id_token_hint. */
    hintSubject: text("hint_subject"),
    /** The `claims` parameter as lib/oauth/claims-request.ts reduced it (OIDC Core 5.5). */
    claims: jsonb("claims").$type<{ idToken: string[]; userinfo: string[]; subjects: string[] | null; acr?: string[] | null } | null>(),
    /** Authentication context classes asked for (`acr_values`, an essential `acr` claim). */
    acrValues: text("acr_values").array().notNull().default(sql`'{}'::text[]`),
    /** The WebAuthn challenge of the passkey prompt the last login page showed; used once. */
    webauthnChallenge: text("webauthn_challenge"),
    /** API identifiers asked for with `resource` (RFC 8707). */
    resources: text("resources").array().notNull().default(sql`'{}'::text[]`),
    locale: text("locale").notNull(),
    /** Login name entered on the first step, for the password step. */
    loginName: text("login_name"),
    /** The session the user signed in with or chose; the callback completes the request with it. */
    sessionId: text("session_id"),
    /** Message key of the last failed step and the non-secret values to show again. */
    formError: text("form_error"),
    formValues: jsonb("form_values").$type<Record<string, string> | null>(),
    /** The user refused the consent screen: the request ends with access_denied. */
    consentDenied: boolean("consent_denied").notNull().default(false),
    createdAt: created(),
    expiresAt: ts("expires_at").notNull(),
    completedAt: ts("completed_at"),
  },
  (t) => [index("auth_requests_expires_idx").on(t.expiresAt)],
);

/**
 * Per-locale overrides of hosted-login texts, edited in the admin console: `key` is a message
 * path below the `login` namespace of messages/<locale>.json. Merged over the catalog at request
 * time (lib/i18n/overrides.ts), so a change shows on the login pages at once.
 */
export const textOverrides = pgTable(
  "text_overrides",
  {
    locale: text("locale").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.locale, t.key] })],
);

/**
 * What a user allowed a third-party client: the protocol scopes and, per API identifier, that
 * API's scopes (all it ever allowed, so that a request for fewer asks nothing), and when last. A
 * request for a scope or an API not in the set asks again (lib/login/consent-set.ts).
 */
export const consents = pgTable(
  "consents",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    clientId: text("client_id")
      .notNull()
      .references(() => clients.id, { onDelete: "cascade" }),
    /** The protocol's scopes (openid, profile, ...). */
    scopes: text("scopes").array().notNull(),
    /** `{[apiIdentifier]: scopes}`: the APIs allowed (a key, even with no scope) and their scopes. */
    apiScopes: jsonb("api_scopes").$type<Record<string, string[]>>().notNull().default({}),
    grantedAt: ts("granted_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] }), index("consents_client_idx").on(t.clientId)],
);

/** `descriptions`: the consent page's text per locale; `description` when the user's locale has none. */
export type ApiScope = { name: string; description: string; descriptions?: Partial<Record<"en" | "de" | "fr" | "it", string>> };
export type ApiRole = { key: string; name: string; description: string };

/**
 * An API (resource server): its identifier is the `aud` of the access tokens issued for it
 * (RFC 8707), with its own scopes, roles, token format and lifetime, and its own credentials to
 * call introspection with: a secret (stored as a hash) for HTTP Basic, and/or public keys for
 * `private_key_jwt`.
 */
export const apis = pgTable("apis", {
  id: text("id").primaryKey(),
  identifier: text("identifier").notNull().unique(),
  name: text("name").notNull(),
  scopes: jsonb("scopes").$type<ApiScope[]>().notNull().default([]),
  roles: jsonb("roles").$type<ApiRole[]>().notNull().default([]),
  accessTokenType: text("access_token_type").notNull().default("jwt"),
  accessTokenLifetime: integer("access_token_lifetime").notNull(),
  secretHash: text("secret_hash"),
  jwks: jsonb("jwks").$type<{ keys: Record<string, unknown>[] } | null>(),
  createdAt: created(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/** Roles of an API held by users and by machine clients (client credentials). */
export const userRoles = pgTable(
  "user_roles",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    apiId: text("api_id")
      .notNull()
      .references(() => apis.id, { onDelete: "cascade" }),
    roleKey: text("role_key").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.apiId, t.roleKey] })],
);

export const clientRoles = pgTable(
  "client_roles",
  {
    clientId: text("client_id")
      .notNull()
      .references(() => clients.id, { onDelete: "cascade" }),
    apiId: text("api_id")
      .notNull()
      .references(() => apis.id, { onDelete: "cascade" }),
    roleKey: text("role_key").notNull(),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.apiId, t.roleKey] })],
);

/**
 * Every mail Torii sends, and its state: `queued` (waiting for a try), `sent`, `failed` (the
 * server's last error, tried again until `attempts` runs out), or `held` (no mail server is
 * configured: the outbox is where it can be read).
 */
export const mailOutbox = pgTable(
  "mail_outbox",
  {
    id: text("id").primaryKey(),
    to: text("to").notNull(),
    subject: text("subject").notNull(),
    text: text("text").notNull(),
    html: text("html").notNull(),
    /** Which mail it is (`password_reset`, `smtp_test`...), and for whom: for the console and the audit. */
    template: text("template").notNull(),
    userId: text("user_id"),
    state: text("state").notNull(),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    nextAttemptAt: ts("next_attempt_at"),
    createdAt: created(),
    sentAt: ts("sent_at"),
  },
  (t) => [index("mail_outbox_due_idx").on(t.state, t.nextAttemptAt), index("mail_outbox_created_idx").on(t.createdAt)],
);

/** Password reset links: only the SHA-256 of the link's token is stored; used once, then kept until expiry. */
export const passwordResets = pgTable(
  "password_resets",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    expiresAt: ts("expires_at").notNull(),
    usedAt: ts("used_at"),
    createdAt: created(),
  },
  (t) => [index("password_resets_user_idx").on(t.userId)],
);

/**
 * Email address verification: a 6-digit code (for the page) and a link token (for the mail's
 * button), both stored only as HMACs under the master key. Single use; a few wrong codes retire it.
 */
export const emailVerifications = pgTable(
  "email_verifications",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** The address the code was sent to: a later change of address makes it worthless. */
    email: text("email").notNull(),
    codeHash: text("code_hash").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    attempts: integer("attempts").notNull().default(0),
    expiresAt: ts("expires_at").notNull(),
    usedAt: ts("used_at"),
    createdAt: created(),
  },
  (t) => [index("email_verifications_user_idx").on(t.userId)],
);

/**
 * A user's second factors. A TOTP authenticator (RFC 6238) keeps its secret encrypted under the
 * master key and the last time step it accepted (a code is good once); it is pending until the
 * first code proves the enrolment (`confirmedAt`). A passkey is a WebAuthn credential: its id,
 * public key (COSE, base64url), signature counter and whether it is synced (`deviceType`).
 */
export const userFactors = pgTable(
  "user_factors",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    type: text("type").$type<"totp" | "webauthn">().notNull(),
    name: text("name").notNull(),
    secretEnc: text("secret_enc"),
    lastStep: integer("last_step"),
    credentialId: text("credential_id").unique(),
    publicKey: text("public_key"),
    signCount: integer("sign_count").notNull().default(0),
    transports: text("transports").array().notNull().default(sql`'{}'::text[]`),
    deviceType: text("device_type"),
    confirmedAt: ts("confirmed_at"),
    lastUsedAt: ts("last_used_at"),
    createdAt: created(),
  },
  (t) => [index("user_factors_user_idx").on(t.userId)],
);

/** Ten single-use recovery codes per user, stored only as HMACs under the master key. */
export const recoveryCodes = pgTable(
  "recovery_codes",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    usedAt: ts("used_at"),
    createdAt: created(),
  },
  (t) => [index("recovery_codes_user_idx").on(t.userId)],
);
