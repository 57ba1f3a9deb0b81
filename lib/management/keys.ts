import { dateOf } from "@/lib/clock";
import { z } from "zod";
import { listSigningKeys, rotateSigningKey } from "@/lib/keys/signing-keys";
import { named, route } from "./route";

const iso = z.iso.datetime();
const SigningKey = z.object({
  kid: z.string(),
  alg: z.string(),
  /** `next`: published, signs once relying parties' cached key sets have it; `active`: signs now. */
  status: z.enum(["next", "active", "retired"]),
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
    summary: "The signing keys' public metadata, oldest first: the active key signs; a next key is published and signs once relying parties' cached key sets (IDP_JWKS_MAX_AGE) have it; retired keys stay published until their tokens expire.",
    tag: "keys",
    success: { status: 200, description: "The keys.", schema: KeyList },
    async handler(ctx) {
      const keys = await listSigningKeys(ctx.db, dateOf(ctx.inst.clock));
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
    summary: "Rotate now: a new key is published at once and signs after the key set's max-age (IDP_JWKS_MAX_AGE), so that no relying party sees a token signed by a key it has not fetched; the previous key signs until then and stays published until its tokens expire.",
    tag: "keys",
    success: { status: 200, description: "The new active key.", schema: Rotated },
    async handler(ctx) {
      const before = (await listSigningKeys(ctx.db, dateOf(ctx.inst.clock))).filter((k) => k.status !== "retired").map((k) => k.kid);
      // rotateSigningKey records signing_key.rotated with this actor in its own transaction.
      const r = await rotateSigningKey(ctx.inst, {
        force: true,
        intervalSeconds: ctx.inst.config.keyRotationIntervalSeconds,
        publishDelaySeconds: ctx.inst.config.jwksMaxAgeSeconds,
        actor: ctx.actor,
      });
      return { kid: r.kid, retired: before };
    },
  }),
];
