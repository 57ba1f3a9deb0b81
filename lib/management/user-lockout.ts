import { dateOf } from "@/lib/clock";
import { z } from "zod";
import { liftUserLockout, userLockout, type UserLockout } from "@/lib/login/lockout";
import { recordAudit } from "@/lib/store/audit";
import { getSettings } from "@/lib/store/settings";
import { getUser } from "@/lib/store/users";
import { notFound } from "./http";
import { named, route, type Ctx } from "./route";

/**
 * An account's lock after failed sign-ins (lib/login/lockout.ts), for administrators: see it and
 * lift it. Separate from the user's `locked` flag, which an administrator sets and which no
 * browser passes.
 */
const LockoutView = named(
  "UserLockout",
  z.object({
    locked: z.boolean().describe("Locked after failed sign-ins, for browsers that never signed in to the account."),
    lockedAt: z.string().nullable(),
    lockedUntil: z.string().nullable(),
    recentFailures: z.number().int().describe("Failures from unknown browsers in the lockout window, counting toward the next lock."),
  }),
);

function view(l: UserLockout): z.infer<typeof LockoutView> {
  return {
    locked: l.locked,
    lockedAt: l.lockedAt?.toISOString() ?? null,
    lockedUntil: l.lockedUntil?.toISOString() ?? null,
    recentFailures: l.recentFailures,
  };
}

async function requireUser(ctx: Ctx): Promise<string> {
  const user = await getUser(ctx.db, ctx.params.userId!);
  if (!user) throw notFound("user");
  return user.id;
}

export const userLockoutRoutes = [
  route({
    method: "GET",
    path: "/users/{userId}/lockout",
    operationId: "getUserLockout",
    summary: "Whether failed sign-ins have locked the user, and the failures counting toward a lock.",
    tag: "users",
    success: { status: 200, description: "The lock state.", schema: LockoutView },
    errors: [404],
    async handler(ctx) {
      const id = await requireUser(ctx);
      return view(await userLockout(ctx.db, (await getSettings(ctx.inst)).lockoutPolicy, id, dateOf(ctx.inst.clock)));
    },
  }),
  route({
    method: "DELETE",
    path: "/users/{userId}/lockout",
    operationId: "liftUserLockout",
    summary: "Lift the user's lock after failed sign-ins and forget the failures counting toward the next one.",
    tag: "users",
    success: { status: 200, description: "The lock state now.", schema: LockoutView },
    errors: [404],
    async handler(ctx) {
      const id = await requireUser(ctx);
      const { lockoutPolicy } = await getSettings(ctx.inst);
      return ctx.db.transaction(async (tx) => {
        const wasLocked = await liftUserLockout(tx, id, dateOf(ctx.inst.clock));
        await recordAudit(tx, ctx.actor, { action: "user.lockout.lifted", targetType: "user", targetId: id, details: { wasLocked } });
        return view(await userLockout(tx, lockoutPolicy, id, dateOf(ctx.inst.clock)));
      });
    },
  }),
];
