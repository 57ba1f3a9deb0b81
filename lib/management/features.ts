import { dateOf } from "@/lib/clock";
import { z } from "zod";
import { recordAudit } from "@/lib/store/audit";
import { mutateSettings, readSettings, writeSettings } from "@/lib/store/settings";
import { named, route } from "./route";

const Features = named("Features", z.object({ tokenExchange: z.boolean(), impersonation: z.boolean() }));
const FeaturesUpdate = named("FeaturesUpdate", z.strictObject(Features.shape).partial());

export const featureRoutes = [
  route({
    method: "GET",
    path: "/features",
    operationId: "getFeatures",
    summary: "Instance features (both off by default).",
    tag: "features",
    success: { status: 200, description: "The features.", schema: Features },
    async handler(ctx) {
      return (await readSettings(ctx.db))!.features;
    },
  }),
  route({
    method: "PUT",
    path: "/features",
    operationId: "setFeatures",
    summary: "Turn features on or off; fields left out keep their value.",
    tag: "features",
    body: FeaturesUpdate,
    success: { status: 200, description: "The features now.", schema: Features },
    async handler(ctx, body) {
      return mutateSettings(ctx.inst, async (tx) => {
        const current = (await readSettings(tx))!.features;
        const features = { ...current, ...body };
        await writeSettings(tx, { features }, dateOf(ctx.inst.clock));
        await recordAudit(tx, ctx.actor, { action: "features.updated", targetType: "instance", details: { from: current, to: features } });
        return features;
      });
    },
  }),
];
