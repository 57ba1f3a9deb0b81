import type { IncomingMessage, ServerResponse } from "node:http";
import { handleConsoleSignOut } from "@/lib/console/routes";
import {
  handleSubmitAccount,
  handleSubmitConsent,
  handleSubmitForgot,
  handleSubmitLoginName,
  handleSubmitPassword,
  handleSubmitRegister,
  handleSubmitReset,
  handleSubmitVerifyEmail,
  handleSubmitVerifyLink,
} from "@/lib/login/handlers";
import { handleSubmitEnrolFactor, handleSubmitRecoveryCodes, handleSubmitSecondFactor } from "@/lib/login/factor-handlers";
import { handleSubmitPasskeySignIn } from "@/lib/login/passkey-handlers";
import { ACCOUNT_ACTIONS } from "@/lib/account/actions";
import { handleAccountForm, handleAccountSignOut } from "@/lib/account/handlers";
import { handleAuthorize, handleAuthorizeCallback } from "@/lib/oauth/authorize";
import { handleLogoutConfirm } from "@/lib/oauth/end-session-confirm";
import { handleEndSession } from "@/lib/oauth/end-session";
import type { Engine } from "@/lib/engine";
import type { NextRequestHandler } from "@/lib/server/create-server";

/**
 * Stands in for Next in tests that run without a build: the route handlers Next serves in
 * production (app/**\/route.ts), given a Web Request whose body streams from the socket as
 * Next's is, so that body limits and hostile input reach the same code. Pages are not served.
 */
export const NEXT_ROUTES: Record<string, { methods: string[]; handler: (engine: Engine, r: Request) => Promise<Response> }> = {
  "/oauth/v2/authorize": { methods: ["GET", "POST"], handler: handleAuthorize },
  "/oauth/v2/authorize/callback": { methods: ["GET"], handler: handleAuthorizeCallback },
  "/oidc/v1/end_session": { methods: ["GET", "POST"], handler: handleEndSession },
  "/ui/logout/confirm": { methods: ["POST"], handler: handleLogoutConfirm },
  "/ui/login/submit/loginname": { methods: ["POST"], handler: handleSubmitLoginName },
  "/ui/login/submit/account": { methods: ["POST"], handler: handleSubmitAccount },
  "/ui/login/submit/register": { methods: ["POST"], handler: handleSubmitRegister },
  "/ui/login/submit/password": { methods: ["POST"], handler: handleSubmitPassword },
  "/ui/login/submit/consent": { methods: ["POST"], handler: handleSubmitConsent },
  "/ui/login/submit/forgot": { methods: ["POST"], handler: handleSubmitForgot },
  "/ui/login/submit/reset": { methods: ["POST"], handler: handleSubmitReset },
  "/ui/login/submit/verify-email": { methods: ["POST"], handler: handleSubmitVerifyEmail },
  "/ui/login/submit/verify": { methods: ["POST"], handler: handleSubmitVerifyLink },
  "/ui/login/submit/factor": { methods: ["POST"], handler: handleSubmitSecondFactor },
  "/ui/login/submit/factor-enrol": { methods: ["POST"], handler: handleSubmitEnrolFactor },
  "/ui/login/submit/recovery-codes": { methods: ["POST"], handler: handleSubmitRecoveryCodes },
  "/ui/login/submit/passkey": { methods: ["POST"], handler: handleSubmitPasskeySignIn },
  "/ui/console/signout": { methods: ["POST"], handler: handleConsoleSignOut },
  "/ui/account/signout": { methods: ["POST"], handler: handleAccountSignOut },
  // app/ui/account/submit/[action]/route.ts: every action, and the one that only forgets the codes.
  ...Object.fromEntries(
    [...Object.keys(ACCOUNT_ACTIONS), "codes-saved", "no-such-action"].map((action) => [
      `/ui/account/submit/${action}`,
      { methods: ["POST"], handler: (engine: Engine, r: Request) => handleAccountForm(engine, r, action) },
    ]),
  ),
};

export function nextRoutesStandIn(engine: Engine, origin: string): NextRequestHandler {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const route = NEXT_ROUTES[(req.url ?? "/").split("?")[0]!];
    if (!route) return void res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
    // Next answers a method a route does not export with 405.
    if (!route.methods.includes(req.method ?? "")) return void res.writeHead(405, { Allow: route.methods.join(", ") }).end();
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const request = new Request(origin + (req.url ?? "/"), {
      method: req.method,
      headers,
      // As Next does (NextRequestAdapter.fromNodeNextRequest): the Node stream itself, which
      // undici reads as an async iterable; cancelling the body destroys the request.
      body: hasBody ? (req as unknown as ReadableStream<Uint8Array>) : undefined,
      // @ts-expect-error Node's fetch needs this for a streamed body; the DOM types lack it.
      duplex: "half",
    });
    const response = await route.handler(engine, request);
    const out: Record<string, string | string[]> = {};
    response.headers.forEach((v, k) => {
      if (k !== "set-cookie") out[k] = v;
    });
    const cookies = response.headers.getSetCookie();
    if (cookies.length) out["set-cookie"] = cookies;
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, out).end(body);
  };
}
