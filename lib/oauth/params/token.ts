import { z } from "zod";
import { optional, required } from "./parse";

/** Declared parameters of each token-endpoint grant (spec 4.3); client authentication parameters are client-auth.ts's. */

export { GRANT } from "@/lib/protocol/vocabulary";

export const authorizationCodeParams = z.object({
  code: required(),
  redirect_uri: required(),
  code_verifier: optional(),
});

export const refreshTokenParams = z.object({
  refresh_token: required(),
  scope: optional(),
});

export const clientCredentialsParams = z.object({
  scope: optional(),
});

export const jwtBearerParams = z.object({
  assertion: required(),
  scope: optional(),
});

export const tokenExchangeParams = z.object({
  subject_token: required(),
  subject_token_type: required(),
  actor_token: optional(),
  actor_token_type: optional(),
  requested_token_type: optional(),
  scope: optional(),
  audience: optional(),
  resource: optional(),
});

/** RFC 7636 4.1: 43-128 unreserved characters. */
export const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
