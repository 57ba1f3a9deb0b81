import { dateOf } from "@/lib/clock";
import { z } from "zod";
import type { RateLimits } from "@/db/schema";
import { refreshReuseIntervalSeconds } from "@/lib/oauth/grants/refresh-successor";
import { recordAudit } from "@/lib/store/audit";
import { accountPolicyOf } from "@/lib/login/account-policy";
import {
  DEFAULT_RATE_LIMITS,
  DEFAULT_RETENTION,
  MAX_AUTH_CODE_SECONDS,
  MAX_REFRESH_REUSE_INTERVAL_SECONDS,
  mutateSettings,
  readSettings,
  SUPPORTED_LOCALES,
  writeSettings,
  type Settings,
} from "@/lib/store/settings";
import { codedPattern } from "@/lib/problem";
import { invalidFields } from "./http";
import { named, route } from "./route";

const DAY = 86_400;
const seconds = (min: number, max: number) => z.number().int().min(min).max(max);

const lifetimes = z.strictObject({
  accessToken: seconds(1, 7 * DAY),
  idToken: seconds(1, 7 * DAY),
  refreshToken: seconds(1, 400 * DAY),
  authCode: seconds(1, MAX_AUTH_CODE_SECONDS),
  sessionIdle: seconds(60, 400 * DAY),
  sessionAbsolute: seconds(60, 400 * DAY),
});
// Only the limits something enforces: a name nothing reads (a typo) is refused, not kept.
const rateLimits = z.strictObject({
  jwksPerMinute: seconds(1, 10_000_000),
  tokenPerMinute: seconds(1, 10_000_000),
  registrationPerHour: seconds(1, 10_000_000).describe("Self-registrations per hour and client address."),
});
const RATE_LIMIT_NAMES = Object.keys(rateLimits.shape) as (keyof RateLimits)[];

/**
 * The stored limits with a default for each one stored before it existed, and without the names
 * an earlier version accepted though nothing reads them.
 */
function enforcedRateLimits(...layers: Partial<RateLimits>[]): RateLimits {
  const merged: Partial<RateLimits> = { ...DEFAULT_RATE_LIMITS };
  for (const layer of layers) Object.assign(merged, layer);
  return Object.fromEntries(RATE_LIMIT_NAMES.map((k) => [k, merged[k]])) as RateLimits;
}
const lockoutPolicy = z
  .strictObject({
    windowSeconds: seconds(60, 30 * DAY).describe("Sliding window over which failed sign-ins count."),
    freeFailures: seconds(1, 1000).describe("Failures of one account from one address before each further try waits (1 s, 2 s, 4 s…)."),
    addressFreeFailures: seconds(1, 100_000).describe("Failures from one address, over all accounts, before each further try waits."),
    maxDelaySeconds: seconds(1, DAY).describe("The longest wait between tries."),
    lockAfterFailures: seconds(1, 100_000).describe(
      "Failures of one account from browsers that never signed in to it before it is locked for them (its owner's browsers keep signing in).",
    ),
    lockSeconds: seconds(1, 30 * DAY).describe("How long such a lock lasts; an administrator can lift it earlier."),
  })
  .describe("Throttling of failed sign-ins and the account lock.");
const retention = z
  .strictObject({ auditDays: seconds(1, 3650).describe("Days audit events are kept.") })
  .describe("How long records are kept once they decide nothing any more.");
const passwordPolicy = z.strictObject({
  minLength: seconds(1, 256),
  requireUppercase: z.boolean(),
  requireLowercase: z.boolean(),
  requireNumber: z.boolean(),
  requireSymbol: z.boolean(),
  maxAgeDays: seconds(0, 3650).describe(
    "Days a password may be used: a sign-in with an older one asks for a new one before it completes (sessions signed in before go on). 0: passwords never expire.",
  ),
});
const hostname = z
  .string()
  .trim()
  .toLowerCase()
  .regex(
    codedPattern(/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/, "host_name"),
    "Must be a host name such as example.com.",
  );

const refreshTokenReuseIntervalSeconds = seconds(0, MAX_REFRESH_REUSE_INTERVAL_SECONDS).describe(
  "Seconds after a refresh during which the refresh token just used may be presented again and gets the same new refresh token (with a new access token) instead of being taken for a stolen token, which revokes all tokens of that sign-in. For relying parties that refresh from several tabs or retry after a timeout. 0 (the default) is strict reuse detection; at most 60.",
);

const registration = z
  .strictObject({
    enabled: z.boolean().describe("Whether people may create their own account on the login pages (prompt=create, the register link)."),
    names: z.enum(["required", "optional", "hidden"]).describe("Whether the registration page asks for the given and family name."),
  })
  .describe("Self-registration.");
const passwordReset = z
  .strictObject({ linkLifetimeSeconds: seconds(300, 7 * DAY).describe("How long a mailed reset link works (once).") })
  .describe("Password reset by mail.");

const emailVerification = z
  .enum(["off", "optional", "required"])
  .describe("off: no verification mails; optional: new and changed addresses get a code, sign-in does not wait; required: a sign-in completes only with a verified address.");

const mfa = z
  .enum(["off", "optional", "required"])
  .describe("Second factors. off: none offered or asked; optional: users may enrol one, and who has one is asked for it at every sign-in; required: every sign-in needs one (a user without one enrols one during the next sign-in).");

const SettingsView = named(
  "Settings",
  z.object({
    primaryDomain: z.string(),
    defaultLocale: z.enum(SUPPORTED_LOCALES),
    lifetimes: lifetimes.describe("Seconds; client lifetimes default to these when a client is created."),
    refreshTokenReuseIntervalSeconds,
    rateLimits,
    lockoutPolicy,
    passwordPolicy,
    retention,
    registration,
    passwordReset,
    emailVerification,
    mfa,
  }),
);
const SettingsUpdate = named(
  "SettingsUpdate",
  z.strictObject({
    primaryDomain: hostname,
    defaultLocale: z.enum(SUPPORTED_LOCALES),
    lifetimes: lifetimes.partial(),
    refreshTokenReuseIntervalSeconds,
    rateLimits: rateLimits.partial(),
    lockoutPolicy: lockoutPolicy.partial(),
    passwordPolicy: passwordPolicy.partial(),
    retention: retention.partial(),
    registration: registration.partial(),
    passwordReset: passwordReset.partial(),
    emailVerification,
    mfa,
  }).partial(),
);

function settingsView(s: Settings): z.infer<typeof SettingsView> {
  // The reuse interval is kept with the lifetimes (no column of its own) but shown on its own.
  const { refreshTokenReuseInterval: _, ...lifetimeValues } = s.lifetimes;
  return {
    primaryDomain: s.primaryDomain,
    defaultLocale: s.defaultLocale as z.infer<typeof SettingsView>["defaultLocale"],
    lifetimes: lifetimeValues,
    refreshTokenReuseIntervalSeconds: refreshReuseIntervalSeconds(s),
    rateLimits: enforcedRateLimits(s.rateLimits),
    lockoutPolicy: s.lockoutPolicy,
    passwordPolicy: { maxAgeDays: 0, ...s.passwordPolicy },
    retention: { ...DEFAULT_RETENTION, ...s.retention },
    registration: { enabled: s.accountPolicy.registration, names: accountPolicyOf(s).registrationNames },
    passwordReset: { linkLifetimeSeconds: s.accountPolicy.passwordResetLinkSeconds },
    emailVerification: accountPolicyOf(s).emailVerification,
    mfa: accountPolicyOf(s).mfa,
  };
}

export const settingsRoutes = [
  route({
    method: "GET",
    path: "/settings",
    operationId: "getSettings",
    summary: "Instance settings.",
    tag: "settings",
    success: { status: 200, description: "The settings.", schema: SettingsView },
    async handler(ctx) {
      return settingsView((await readSettings(ctx.db))!);
    },
  }),
  route({
    method: "PUT",
    path: "/settings",
    operationId: "updateSettings",
    summary: "Change settings; fields left out (also inside the nested objects) keep their value.",
    tag: "settings",
    body: SettingsUpdate,
    success: { status: 200, description: "The settings now.", schema: SettingsView },
    async handler(ctx, body) {
      return mutateSettings(ctx.inst, async (tx) => {
        const current = (await readSettings(tx))!;
        const next = {
          ...(body.primaryDomain !== undefined ? { primaryDomain: body.primaryDomain } : {}),
          ...(body.defaultLocale !== undefined ? { defaultLocale: body.defaultLocale } : {}),
          lifetimes: {
            ...current.lifetimes,
            ...body.lifetimes,
            ...(body.refreshTokenReuseIntervalSeconds !== undefined ? { refreshTokenReuseInterval: body.refreshTokenReuseIntervalSeconds } : {}),
          },
          rateLimits: enforcedRateLimits(current.rateLimits, body.rateLimits ?? {}),
          lockoutPolicy: { ...current.lockoutPolicy, ...body.lockoutPolicy },
          passwordPolicy: { ...current.passwordPolicy, ...body.passwordPolicy },
          retention: { ...DEFAULT_RETENTION, ...current.retention, ...body.retention },
          accountPolicy: {
            registration: body.registration?.enabled ?? current.accountPolicy.registration,
            passwordResetLinkSeconds: body.passwordReset?.linkLifetimeSeconds ?? current.accountPolicy.passwordResetLinkSeconds,
            emailVerification: body.emailVerification ?? accountPolicyOf(current).emailVerification,
            mfa: body.mfa ?? accountPolicyOf(current).mfa,
            registrationNames: body.registration?.names ?? accountPolicyOf(current).registrationNames,
          },
        };
        if (next.lifetimes.sessionIdle > next.lifetimes.sessionAbsolute) {
          throw invalidFields([
            { path: "lifetimes.sessionIdle", code: "idle_exceeds_absolute", message: "The idle session lifetime cannot exceed the absolute one." },
          ]);
        }
        const updated = await writeSettings(tx, next, dateOf(ctx.inst.clock));
        await recordAudit(tx, ctx.actor, {
          action: "settings.updated",
          targetType: "instance",
          details: { fields: Object.keys(body) },
        });
        return settingsView(updated);
      });
    },
  }),
];
