import type { OAuthError } from "@/lib/protocol/errors";
import type { IssueEnv } from "../tokens";
import type { GrantRequest } from "./types";

export type { IssueEnv };

/**
 * A refusal whose writes must still be committed: a replayed code or a reused refresh token
 * revokes what was issued from it, and that revocation must survive the error answer. Returned
 * from the transaction's function, thrown once the transaction has committed.
 */
export class CommittedRefusal {
  constructor(readonly error: OAuthError) {}
}

/**
 * Runs a grant atomically: the code marked used or the refresh token rotated, the grant, the
 * tokens and the audit event commit together or not at all, so a failure half-way (database
 * error, process killed) leaves the code or refresh token usable for the retry. Usually that is
 * one statement with no transaction around it; a lost race or a revocation runs `fn` again in a
 * transaction (`Store.atomically`, lib/store/write.ts), so `fn` works only through `env.repos`.
 *
 * The per-process caches (signing key, settings) are read before the transaction opens and passed
 * in: a cache must not be filled from a transaction that may still roll back, and on PGlite (one
 * connection) a read outside the transaction would wait for it to end. So `env.repos` offers only
 * the transactional repositories (lib/store/repositories.ts).
 */
export async function grantTransaction<T>(g: GrantRequest, fn: (env: IssueEnv) => Promise<T | CommittedRefusal>): Promise<T> {
  const signingKey = await g.store.keys.signing();
  const outcome = await g.store.atomically((repos) => fn({ repos, issuer: g.issuer, signingKey, sealer: g.store.keys.sealer, primaryDomain: g.settings.primaryDomain }));
  if (outcome instanceof CommittedRefusal) throw outcome.error;
  return outcome;
}
