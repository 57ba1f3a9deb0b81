import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@/lib/store/clients";
import { updateSettings } from "@/lib/store/settings";
import type { User } from "@/lib/store/users";
import { startTestInstance, type TestInstance } from "./harness";
import { basic, makeClient, makeCode, makeUser, token, verify } from "./token-support";

const GT = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS = "urn:ietf:params:oauth:token-type:access_token";
const JWT = "urn:ietf:params:oauth:token-type:jwt";

let t: TestInstance;
let client: Client;
let secret: string;
let user: User;
let admin: User;

beforeAll(async () => {
  t = await startTestInstance();
  ({ client, secret } = (await makeClient(t)) as { client: Client; secret: string });
  user = await makeUser(t);
  admin = await makeUser(t, { roles: ["impersonation"] });
  await updateSettings(t.inst, { features: { tokenExchange: true, impersonation: true } });
});
afterAll(() => t.close());

const call = (p: Record<string, string>) => token(t, p, { auth: basic(client.id, secret) });

async function accessToken(u: User): Promise<string> {
  const { code } = await makeCode(t, { client, user: u, scopes: ["openid", "profile", "offline_access"] });
  const r = await call({ grant_type: "authorization_code", code, redirect_uri: "https://rp.example/cb" });
  expect(r.status).toBe(200);
  return r.body.access_token;
}

describe("refreshing the tokens of a token exchange", () => {
  it("keeps the impersonation (act) and the audience in every refreshed token", async () => {
    const r = await call({
      grant_type: GT,
      subject_token: await accessToken(user),
      subject_token_type: ACCESS,
      actor_token: await accessToken(admin),
      actor_token_type: ACCESS,
      requested_token_type: JWT,
      scope: "openid offline_access",
    });
    expect(r.status).toBe(200);
    expect(r.body.refresh_token).toBeTruthy();
    const exchanged = (await verify(t, r.body.access_token)).payload;
    expect(exchanged.act).toEqual({ sub: admin.id });

    let refreshToken = r.body.refresh_token as string;
    for (let i = 0; i < 2; i++) {
      const next = await call({ grant_type: "refresh_token", refresh_token: refreshToken });
      expect(next.status).toBe(200);
      const at = (await verify(t, next.body.access_token)).payload;
      expect(at).toMatchObject({ sub: user.id, act: { sub: admin.id }, aud: exchanged.aud });
      expect((await verify(t, next.body.id_token)).payload.act).toEqual({ sub: admin.id });
      refreshToken = next.body.refresh_token;
    }
  });
});
