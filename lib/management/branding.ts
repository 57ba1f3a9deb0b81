import { dateOf } from "@/lib/clock";
import { z } from "zod";
import { logoSrc } from "@/lib/logo";
import { recordAudit } from "@/lib/store/audit";
import { mutateSettings, readSettings, writeSettings, type Settings } from "@/lib/store/settings";
import { codedPattern, problem, type Problem } from "@/lib/problem";
import { addProblem } from "./http";
import { named, route } from "./route";
import { shownText } from "@/lib/text/shown-text";

const MAX_LOGO_BYTES = 512 * 1024;
const LOGO_TYPES = ["image/png", "image/jpeg", "image/svg+xml", "image/webp"] as const;

const notType = (type: string) => problem("logo_content", `The image is not of the type ${type} it claims.`, { type });

/** Checks that the bytes are what the data URL says they are, so we never serve one type as another. */
function contentProblem(type: string, bytes: Buffer): Problem | null {
  const starts = (sig: number[]) => sig.every((b, i) => bytes[i] === b);
  switch (type) {
    case "image/png":
      return starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) ? null : notType(type);
    case "image/jpeg":
      return starts([0xff, 0xd8, 0xff]) ? null : notType(type);
    case "image/webp":
      return bytes.subarray(0, 4).toString("latin1") === "RIFF" && bytes.subarray(8, 12).toString("latin1") === "WEBP"
        ? null
        : notType(type);
    default: {
      const svg = bytes.toString("utf8");
      if (!/<svg[\s>]/i.test(svg)) return notType(type);
      // It is served with a CSP that forbids scripts, but a logo has no business carrying any.
      if (/<script|<foreignObject|javascript:|\son[a-z]+\s*=/i.test(svg)) return problem("logo_scripts", "The image must not contain scripts or event handlers.");
      return null;
    }
  }
}

const logo = z
  .string()
  .transform((value, ctx) => {
    const m = /^data:([a-z+/]+);base64,([A-Za-z0-9+/]*={0,2})$/.exec(value);
    if (!m) {
      addProblem(ctx, problem("logo_data_url", "Must be a base64 data: URL (data:image/png;base64,...)."));
      return z.NEVER;
    }
    const type = m[1]!;
    if (!(LOGO_TYPES as readonly string[]).includes(type)) {
      addProblem(ctx, problem("logo_type", `The image type must be one of ${LOGO_TYPES.join(", ")}.`, { types: LOGO_TYPES.join(", ") }));
      return z.NEVER;
    }
    const bytes = Buffer.from(m[2]!, "base64");
    if (bytes.length === 0 || bytes.length > MAX_LOGO_BYTES) {
      addProblem(ctx, problem("logo_size", `The image must be between 1 byte and ${MAX_LOGO_BYTES / 1024} KiB.`, { maximum: MAX_LOGO_BYTES / 1024 }));
      return z.NEVER;
    }
    const content = contentProblem(type, bytes);
    if (content) {
      addProblem(ctx, content);
      return z.NEVER;
    }
    return { type, bytes };
  })
  .describe("A data: URL of a PNG, JPEG, SVG or WebP image of at most 512 KiB; null removes the logo.");

const color = z
  .string()
  .regex(codedPattern(/^#[0-9a-fA-F]{6}$/, "color"), "Must be a color as #rrggbb.")
  .transform((c) => c.toLowerCase());
const darkMode = z.enum(["light", "dark", "auto"]);

const BrandingView = named(
  "Branding",
  z.object({
    productName: z.string(),
    logoUrl: z.string().nullable(),
    primaryColor: z.string(),
    backgroundColor: z.string(),
    darkMode,
  }),
);
const BrandingUpdate = named(
  "BrandingUpdate",
  z
    .strictObject({
      productName: shownText(100).min(1),
      logo: logo.nullable(),
      primaryColor: color,
      backgroundColor: color,
      darkMode,
    })
    .partial(),
);

function brandingView(s: Settings, issuer: string): z.infer<typeof BrandingView> {
  return {
    ...s.branding,
    logoUrl: s.logo ? `${issuer}${logoSrc(s)}` : null,
  };
}

export const brandingRoutes = [
  route({
    method: "GET",
    path: "/branding",
    operationId: "getBranding",
    summary: "The branding of the login pages and the console.",
    tag: "branding",
    success: { status: 200, description: "The branding.", schema: BrandingView },
    async handler(ctx) {
      return brandingView((await readSettings(ctx.db))!, ctx.inst.config.issuer);
    },
  }),
  route({
    method: "PUT",
    path: "/branding",
    operationId: "updateBranding",
    summary: "Change the branding; fields left out keep their value.",
    tag: "branding",
    body: BrandingUpdate,
    success: { status: 200, description: "The branding now.", schema: BrandingView },
    async handler(ctx, body) {
      const { logo: newLogo, ...fields } = body;
      const updated = await mutateSettings(ctx.inst, async (tx) => {
        const current = (await readSettings(tx))!;
        const s = await writeSettings(tx, {
          branding: { ...current.branding, ...fields },
          ...(newLogo !== undefined
            ? { logo: newLogo ? newLogo.bytes : null, logoContentType: newLogo ? newLogo.type : null }
            : {}),
        }, dateOf(ctx.inst.clock));
        await recordAudit(tx, ctx.actor, {
          action: "branding.updated",
          targetType: "instance",
          details: {
            fields: Object.keys(body),
            ...(newLogo !== undefined ? { logo: newLogo ? { type: newLogo.type, bytes: newLogo.bytes.length } : null } : {}),
          },
        });
        return s;
      });
      return brandingView(updated, ctx.inst.config.issuer);
    },
  }),
];
