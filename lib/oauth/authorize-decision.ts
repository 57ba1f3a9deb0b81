import type { SessionWithUser } from "@/lib/store/sessions";
import { InteractionRequired, LoginRequired, type OAuthError } from "./errors";
import type { Prompt } from "./params/authorize";

export type Decision =
  | { kind: "complete"; session: SessionWithUser }
  | { kind: "loginName"; loginName: string | null }
  | { kind: "password"; loginName: string }
  | { kind: "accounts" }
  | { kind: "register" }
  | { kind: "error"; error: OAuthError };

export type DecisionInput = {
  prompt: Prompt[];
  maxAge: number | null;
  loginHint: string | null;
  hintSubject: string | null;
  /** Username of the id_token_hint's subject, when that user exists. */
  hintUsername: string | null;
  /** The only users a `claims` request for a specific `sub` allows (OIDC Core 5.5.1); null: any. */
  subjects?: string[] | null;
  sessions: SessionWithUser[];
  primaryDomain: string;
  now: Date;
};

/** Whether the session's authentication is recent enough for max_age (OIDC Core 3.1.2.1). */
export function freshEnough(session: { authTime: Date }, maxAge: number | null, now: Date): boolean {
  return maxAge === null || now.getTime() - session.authTime.getTime() <= maxAge * 1000;
}

/** A login hint names a user by username or by username@primarydomain, case-insensitively. */
export function hintMatches(hint: string, username: string, primaryDomain: string): boolean {
  const h = hint.trim().toLowerCase();
  const u = username.toLowerCase();
  return h === u || h === `${u}@${primaryDomain.toLowerCase()}`;
}

/**
 * What the authorization endpoint does with a valid request, given the browser's live
 * sessions: finish silently, or which login page to show, or (prompt=none) which error.
 */
export function decide(input: DecisionInput): Decision {
  const { prompt, maxAge, loginHint, now } = input;
  // A requested sub names the user as an id_token_hint does; only its sessions can answer.
  const hintSubject = input.hintSubject ?? (input.subjects?.length === 1 ? input.subjects[0]! : null);
  let sessions = input.sessions;
  if (hintSubject) sessions = sessions.filter((s) => s.userId === hintSubject);
  if (input.subjects) sessions = sessions.filter((s) => input.subjects!.includes(s.userId));
  const byHint = loginHint ? sessions.filter((s) => hintMatches(loginHint, s.user.username, input.primaryDomain)) : [];
  const prefill = input.hintUsername ?? loginHint;

  if (prompt.includes("none")) {
    const pool = byHint.length ? byHint : sessions;
    if (!pool.length) return { kind: "error", error: new LoginRequired("The user is not signed in.") };
    const fresh = pool.filter((s) => freshEnough(s, maxAge, now));
    if (!fresh.length) return { kind: "error", error: new LoginRequired("The user must authenticate again (max_age).") };
    if (fresh.length > 1) return { kind: "error", error: new InteractionRequired("The user must choose an account.") };
    return { kind: "complete", session: fresh[0]! };
  }
  if (prompt.includes("create")) return { kind: "register" };
  if (prompt.includes("login")) return { kind: "loginName", loginName: prefill };
  if (prompt.includes("select_account")) return sessions.length ? { kind: "accounts" } : { kind: "loginName", loginName: prefill };

  const target = byHint.length === 1 ? byHint[0] : sessions.length === 1 && (hintSubject || !loginHint) ? sessions[0] : undefined;
  if (target) {
    return freshEnough(target, maxAge, now) ? { kind: "complete", session: target } : { kind: "password", loginName: target.user.username };
  }
  if (loginHint || hintSubject || !sessions.length) return { kind: "loginName", loginName: prefill };
  return { kind: "accounts" };
}
