import type { Executor } from "@/lib/db/client";
import type { Interaction, PolicyAccount, PolicyInput, PolicyRequest } from "@/lib/oauth/signin-policy";
import type { AuthRequest } from "@/lib/store/auth-requests";
import { liveSessions, type SessionWithUser } from "@/lib/store/sessions";
import { getUser } from "@/lib/store/users";
import { LOGIN_PATHS, loginUrl } from "./paths";

/**
 * Glue between the stored flow and the pure sign-in policy (lib/oauth/signin-policy.ts): it
 * loads what the policy reads and turns the policy's interactions into login pages.
 */

/** A live session as the policy sees it. */
export type SessionAccount = SessionWithUser & PolicyAccount;

export function asAccount(s: SessionWithUser): SessionAccount {
  return { ...s, username: s.user.username, locked: s.user.locked };
}

export function policyRequestOf(r: Pick<AuthRequest, "prompt" | "maxAge" | "loginHint" | "hintSubject" | "claims" | "createdAt">): PolicyRequest {
  return {
    prompt: r.prompt as PolicyRequest["prompt"],
    maxAge: r.maxAge,
    loginHint: r.loginHint,
    hintSubject: r.hintSubject,
    subjects: r.claims?.subjects ?? null,
    createdAt: r.createdAt,
  };
}

/**
 * The policy's input for a request of a user agent: its live sessions, the id_token_hint's user,
 * and the session chosen during the request (when it is still live).
 */
export async function loadPolicyInput(
  db: Executor,
  opts: { request: PolicyRequest; userAgentId: string | null; chosenSessionId: string | null; primaryDomain: string; now: Date },
): Promise<PolicyInput<SessionAccount>> {
  // A browser without a row has no sessions (its row is created only when something is stored).
  const sessions = opts.userAgentId ? (await liveSessions(db, opts.userAgentId, opts.now)).map(asAccount) : [];
  const hint = opts.request.hintSubject ? await getUser(db, opts.request.hintSubject) : undefined;
  return {
    request: opts.request,
    sessions,
    chosen: (opts.chosenSessionId && sessions.find((s) => s.id === opts.chosenSessionId)) || null,
    hintUser: hint ? { username: hint.username, locked: hint.locked } : null,
    primaryDomain: opts.primaryDomain,
    now: opts.now,
  };
}

/** What the flow remembers for an interaction's page, and that page. */
export function interactionPage(step: Interaction<PolicyAccount>, authRequestId: string): { location: string; patch: Pick<AuthRequest, "loginName" | "sessionId" | "formError" | "formValues"> } {
  const clear = { sessionId: null, formError: null, formValues: null };
  switch (step.step) {
    case "signIn":
      return {
        location: loginUrl(LOGIN_PATHS.loginName, authRequestId),
        patch: step.notice
          ? { ...clear, loginName: step.loginName, formError: step.notice.kind, formValues: { signedInAs: step.notice.signedInAs } }
          : { ...clear, loginName: step.loginName },
      };
    case "reauthenticate":
      return { location: loginUrl(LOGIN_PATHS.password, authRequestId), patch: { ...clear, loginName: step.account.username } };
    case "chooseAccount":
      return { location: loginUrl(LOGIN_PATHS.accounts, authRequestId), patch: { ...clear, loginName: null } };
    case "register":
      return { location: loginUrl(LOGIN_PATHS.register, authRequestId), patch: { ...clear, loginName: null } };
  }
}
