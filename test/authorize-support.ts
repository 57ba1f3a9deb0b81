import { csrfToken } from "@/lib/session/csrf";
import { findUserAgent } from "@/lib/store/sessions";
import { insertClient, type Client, type NewClient } from "@/lib/store/clients";
import { insertUser } from "@/lib/store/users";
import { handleAuthorize, handleAuthorizeCallback } from "@/lib/oauth/authorize";
import { handleSubmitAccount, handleSubmitChangePassword, handleSubmitForgot, handleSubmitVerifyEmail, handleSubmitLoginName, handleSubmitPassword, handleSubmitRegister } from "@/lib/login/handlers";
import { handleSubmitEnrolFactor, handleSubmitRecoveryCodes, handleSubmitSecondFactor } from "@/lib/login/factor-handlers";
import type { TestInstance } from "./harness";
import { CHALLENGE } from "./token-support";

export const REDIRECT = "https://rp.example/cb";

export async function makeClient(t: TestInstance, patch: Partial<NewClient> = {}): Promise<Client> {
  const { client } = await insertClient(t.inst.db, {
    name: "Test RP",
    redirectUris: [REDIRECT],
    responseTypes: ["code", "id_token", "id_token token"],
    grantTypes: ["authorization_code", "implicit", "refresh_token"],
    authMethod: "client_secret_basic",
    accessTokenLifetime: 3600,
    idTokenLifetime: 3600,
    refreshTokenLifetime: 86400,
    ...patch,
  });
  return client;
}

export async function makeUser(t: TestInstance, username: string, password = "correct horse battery") {
  return insertUser(t.inst.db, { type: "human", username, email: `${username.replace(/[^a-z0-9]/gi, "")}@mail.example`, givenName: "Given", familyName: "Family", emailVerified: true }, password);
}

/** A browser without a browser: a cookie jar and the handlers called directly with Requests. */
export class Browser {
  cookies = new Map<string, string>();
  headers: Record<string, string> = { "x-torii-client-address": "10.0.0.1" };
  constructor(readonly t: TestInstance) {}

  private store(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      this.cookies.set(pair!.slice(0, i), decodeURIComponent(pair!.slice(i + 1)));
    }
    return res;
  }

  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("; ");
  }

  request(path: string, init: RequestInit = {}): Request {
    const h = new Headers({ ...this.headers, ...(init.headers as Record<string, string>) });
    if (this.cookies.size) h.set("cookie", this.cookieHeader());
    return new Request(this.t.baseUrl + path, { ...init, headers: h });
  }

  async authorize(params: Record<string, string>, extra: Record<string, string> = {}): Promise<Response> {
    const qs = new URLSearchParams(params).toString();
    return this.store(await handleAuthorize(this.t.inst, this.request(`/oauth/v2/authorize?${qs}`, { headers: extra })));
  }

  async authorizeRaw(query: string, init: RequestInit = {}): Promise<Response> {
    return this.store(await handleAuthorize(this.t.inst, this.request(`/oauth/v2/authorize${query}`, init)));
  }

  async callback(location: string): Promise<Response> {
    return this.store(await handleAuthorizeCallback(this.t.inst, this.request(location)));
  }

  async csrf(authRequest: string): Promise<string> {
    const ua = await findUserAgent(this.t.inst.db, this.cookies.get("torii_ua") ?? "");
    return csrfToken(this.t.inst.masterKey, ua!.id, authRequest);
  }

  async post(
    step: "loginname" | "password" | "account" | "register" | "forgot" | "verify-email" | "factor" | "factor-enrol" | "recovery-codes" | "password-change",
    authRequest: string,
    fields: Record<string, string>,
    opts: { csrf?: string | null; origin?: string } = {},
  ): Promise<Response> {
    const handler = {
      loginname: handleSubmitLoginName,
      password: handleSubmitPassword,
      account: handleSubmitAccount,
      register: handleSubmitRegister,
      forgot: handleSubmitForgot,
      "verify-email": handleSubmitVerifyEmail,
      factor: handleSubmitSecondFactor,
      "factor-enrol": handleSubmitEnrolFactor,
      "recovery-codes": handleSubmitRecoveryCodes,
      "password-change": handleSubmitChangePassword,
    }[step];
    const csrf = opts.csrf === undefined ? await this.csrf(authRequest) : opts.csrf;
    const body = new URLSearchParams({ authRequest, ...(csrf === null ? {} : { csrf }), ...fields });
    const res = this.store(
      await handler(
        this.t.inst,
        this.request(`/ui/login/submit/${step}`, {
          method: "POST",
          body: body.toString(),
          headers: { "content-type": "application/x-www-form-urlencoded", origin: opts.origin ?? this.t.baseUrl },
        }),
      ),
    );
    // What the step left to do after its answer (mail, lib/background.ts) is done before the
    // test goes on, as it would be by the time a person reads the next page.
    await this.t.inst.background.idle();
    return res;
  }

  /** Signs in through the login name and password steps; returns the final client response. */
  async signIn(authorizeResponse: Response, loginName: string, password: string): Promise<Response> {
    const id = authRequestOf(authorizeResponse);
    const r1 = await this.post("loginname", id, { loginName });
    if (!r1.headers.get("location")!.startsWith("/ui/login/password")) throw new Error(`expected the password step: ${r1.status} ${r1.headers.get("location")}`);
    const r2 = await this.post("password", id, { password });
    const loc = r2.headers.get("location")!;
    if (!loc.startsWith("/oauth/v2/authorize/callback")) throw new Error(`sign-in failed: ${loc}`);
    return this.callback(loc);
  }
}

export function authRequestOf(res: Response): string {
  const loc = res.headers.get("location");
  if (!loc) throw new Error(`no redirect (status ${res.status})`);
  const id = new URL(loc, "http://x").searchParams.get("authRequest");
  if (!id) throw new Error(`not a login page: ${loc}`);
  return id;
}

export function redirectParams(res: Response): URLSearchParams {
  const loc = new URL(res.headers.get("location")!);
  return loc.hash ? new URLSearchParams(loc.hash.slice(1)) : loc.searchParams;
}

/** A client (code flow) and the secret the management API gave it, for its token requests. */
export async function makeClientWithSecret(t: TestInstance): Promise<{ client: Client; secret: string }> {
  const client = await makeClient(t);
  const res = await t.api(`/management/v1/clients/${client.id}/secret`, { method: "POST" });
  return { client, secret: ((await res.json()) as { clientSecret: string }).clientSecret };
}

/** An authorization request of the code flow with PKCE (S256, test/token-support.ts VERIFIER), scope openid. */
export function pkceRequest(clientId: string, extra: Record<string, string> = {}): Record<string, string> {
  return { client_id: clientId, redirect_uri: REDIRECT, response_type: "code", scope: "openid", code_challenge: CHALLENGE, code_challenge_method: "S256", ...extra };
}

/** Where a response sends the browser ("" when nowhere). */
export const locationOf = (r: Response): string => r.headers.get("location") ?? "";

/** The authorization callback of a pending request. */
export const callbackOf = (flow: string): string => `/oauth/v2/authorize/callback?id=${encodeURIComponent(flow)}`;
