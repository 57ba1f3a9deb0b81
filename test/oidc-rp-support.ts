import * as oidc from "openid-client";
import { insertClient, type Client, type NewClient } from "@/lib/store/clients";
import type { TestInstance } from "./harness";
import { REDIRECT } from "./authorize-support";

/**
 * A relying party built with openid-client (v6), the library real applications use: it reads our
 * discovery document, builds authorization URLs, validates authorization responses (state, ID
 * token, nonce) and calls the token and userinfo endpoints over HTTP. The browser part in between
 * is the Browser of authorize-support.ts.
 */
export type Rp = { client: Client; secret: string; config: oidc.Configuration };

export async function makeRp(t: TestInstance, patch: Partial<NewClient> = {}, responseType: "code" | "id_token" = "code"): Promise<Rp> {
  const { client, secret } = await insertClient(t.inst.db, {
    name: "openid-client RP",
    redirectUris: [REDIRECT],
    responseTypes: ["code", "id_token", "id_token token"],
    grantTypes: ["authorization_code", "implicit", "refresh_token"],
    authMethod: "client_secret_basic",
    accessTokenLifetime: 3600,
    idTokenLifetime: 3600,
    refreshTokenLifetime: 86400,
    ...patch,
  });
  // The test issuer is plain http on localhost; openid-client marks this helper deprecated only so
  // that it stands out in production code.
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- tests talk to an http issuer
  const execute = [oidc.allowInsecureRequests, ...(responseType === "id_token" ? [oidc.useIdTokenResponseType] : [])];
  const config = await oidc.discovery(new URL(t.issuer), client.id, { redirect_uris: [REDIRECT] }, oidc.ClientSecretBasic(secret!), { execute });
  return { client, secret: secret!, config };
}

export type Delivered = {
  mode: "query" | "fragment" | "form_post";
  params: URLSearchParams;
  /** What the browser would hand the RP: the redirect URL, or the form POST as a Request. */
  toRp: URL | Request;
};

const unescapeHtml = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", "#x27": "'" })[e]!);

/**
 * How an authorization response reached the redirect URI: a 302 with the parameters in the query
 * or in the fragment, or (form_post) a page whose form posts them to the redirect URI.
 */
export async function delivered(res: Response): Promise<Delivered> {
  if (res.status === 302) {
    const url = new URL(res.headers.get("location")!);
    if (url.origin + url.pathname !== REDIRECT) throw new Error(`not delivered to the RP: ${url}`);
    if (url.hash) {
      if (url.search) throw new Error("parameters both in the query and in the fragment");
      return { mode: "fragment", params: new URLSearchParams(url.hash.slice(1)), toRp: url };
    }
    return { mode: "query", params: url.searchParams, toRp: url };
  }
  if (res.status !== 200 || !res.headers.get("content-type")?.includes("text/html")) throw new Error(`unexpected response ${res.status}`);
  const html = await res.text();
  const form = /<form method="post" action="([^"]*)">/.exec(html);
  if (!form) throw new Error("no form_post form on the page");
  const action = unescapeHtml(form[1]!);
  if (action !== REDIRECT) throw new Error(`form posts to ${action}`);
  const params = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) params.append(unescapeHtml(m[1]!), unescapeHtml(m[2]!));
  const toRp = new Request(action, { method: "POST", body: params.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
  return { mode: "form_post", params, toRp };
}

/** An unsigned request object (`alg: none`, OIDC Core 6.1). */
export function unsignedRequestObject(claims: Record<string, unknown>): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  return `${b64({ alg: "none" })}.${b64(claims)}.`;
}

export { oidc };
