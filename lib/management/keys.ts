import { z } from "zod";
import { listSigningKeys, rotateSigningKey } from "@/lib/keys/signing-keys";
import { named, route } from "./route";

const iso = z.iso.datetime();
const SigningKey = z.object({
  kid: z.string(),
  alg: z.string(),
  status: z.enum(["active", "retired"]),
  createdAt: iso,
  retiredAt: iso.nullable(),
  /** When a retired key leaves the published key set. */
  removeAfter: iso.nullable(),
});
const KeyList = named("SigningKeyList", z.object({ keys: z.array(SigningKey) }));
const Rotated = named("SigningKeyRotated", z.object({ kid: z.string(), retired: z.array(z.string()) }));

export const keyRoutes = [
  route({
    method: "GET",
    path: "/keys",
    operationId: "listSigningKeys",
    summary: "The signing keys' public metadata, oldest first; the active key signs, retired keys stay published until their tokens expire.",
    tag: "keys",
    success: { status: 200, description: "The keys.", schema: KeyList },
    async handler(ctx) {
      const keys = await listSigningKeys(ctx.db);
      return {
        keys: keys.map((k) => ({
          kid: k.kid,
          alg: k.alg,
          status: k.status,
          createdAt: k.createdAt.toISOString(),
          retiredAt: k.retiredAt?.toISOString() ?? null,
          removeAfter: k.removeAfter?.toISOString() ?? null,
        })),
      };
    },
  }),
  route({
    method: "POST",
    path: "/keys/rotate",
    operationId: "rotateSigningKey",
    summary: "Rotate now: a new key signs from now on; the previous one stays published until its tokens expire.",
    tag: "keys",
    success: { status: 200, description: "The new active key.", schema: Rotated },
    async handler(ctx) {
      const before = (await listSigningKeys(ctx.db)).filter((k) => k.status === "active").map((k) => k.kid);
      // rotateSigningKey records signing_key.rotated with this actor in its own transaction.
      const r = await rotateSigningKey(ctx.inst, {
        force: true,
        intervalSeconds: ctx.inst.config.keyRotationIntervalSeconds,
        actor: ctx.actor,
      });
      return { kid: r.kid, retired: before };
    },
  }),
];
