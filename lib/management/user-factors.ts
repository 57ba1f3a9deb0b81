import { z } from "zod";
import { recordAudit } from "@/lib/store/audit";
import { deleteAllFactors, listFactors, unusedRecoveryCodes, type Factor } from "@/lib/store/factors";
import { removeSecondFactor } from "@/lib/login/second-factor";
import { getUser } from "@/lib/store/users";
import { notFound } from "./http";
import { named, route, type Ctx } from "./route";

/**
 * A user's second factors (lib/login/second-factor.ts), for administrators: see them and remove
 * them. A user whose factors are gone signs in with the password alone, or, when the settings
 * require a second factor, enrols a new one during the next sign-in.
 */
const FactorView = named(
  "UserFactor",
  z.object({
    id: z.string(),
    type: z.enum(["totp", "webauthn"]).describe("totp: an authenticator app; webauthn: a passkey or security key."),
    name: z.string(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
  }),
);
const FactorList = named(
  "UserFactors",
  z.object({
    factors: z.array(FactorView),
    recoveryCodesRemaining: z.number().int().describe("Unused recovery codes (of ten)."),
  }),
);

const view = (f: Factor): z.infer<typeof FactorView> => ({
  id: f.id,
  type: f.type,
  name: f.name,
  createdAt: f.createdAt.toISOString(),
  lastUsedAt: f.lastUsedAt?.toISOString() ?? null,
});

async function requireUser(ctx: Ctx): Promise<string> {
  const user = await getUser(ctx.db, ctx.params.userId!);
  if (!user) throw notFound("user");
  return user.id;
}

async function listView(ctx: Ctx, userId: string): Promise<z.infer<typeof FactorList>> {
  return { factors: (await listFactors(ctx.db, userId)).map(view), recoveryCodesRemaining: await unusedRecoveryCodes(ctx.db, userId) };
}

export const userFactorRoutes = [
  route({
    method: "GET",
    path: "/users/{userId}/factors",
    operationId: "listUserFactors",
    summary: "The user's second factors and how many recovery codes are left.",
    tag: "users",
    success: { status: 200, description: "The factors.", schema: FactorList },
    errors: [404],
    async handler(ctx) {
      return listView(ctx, await requireUser(ctx));
    },
  }),
  route({
    method: "DELETE",
    path: "/users/{userId}/factors",
    operationId: "resetUserFactors",
    summary: "Remove every second factor and recovery code of the user (a lost phone): they sign in with the password and enrol again.",
    tag: "users",
    success: { status: 200, description: "What is left (nothing).", schema: FactorList },
    errors: [404],
    async handler(ctx) {
      const userId = await requireUser(ctx);
      await ctx.db.transaction(async (tx) => {
        const removed = await deleteAllFactors(tx, userId);
        await recordAudit(tx, ctx.actor, { action: "user.factors.reset", targetType: "user", targetId: userId, details: { removed } });
      });
      return listView(ctx, userId);
    },
  }),
  route({
    method: "DELETE",
    path: "/users/{userId}/factors/{factorId}",
    operationId: "deleteUserFactor",
    summary: "Remove one second factor of the user.",
    tag: "users",
    success: { status: 200, description: "The user's factors now.", schema: FactorList },
    errors: [404],
    async handler(ctx) {
      const userId = await requireUser(ctx);
      // The account page's rule (the last factor takes the recovery codes), without its refusal
      // of the last one while factors are required: the user enrols again at the next sign-in.
      const removed = await removeSecondFactor(ctx.db, userId, ctx.params.factorId!, ctx.actor, { byOwner: false, mfa: "optional" });
      if (!removed.ok) throw notFound("factor");
      return listView(ctx, userId);
    },
  }),
];
