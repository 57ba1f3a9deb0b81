import type { Caches } from "@/lib/cache/caches";
import type { Executor } from "@/lib/db/client";
import { activeSigningKey, type ActiveKey } from "@/lib/keys/signing-keys";
import type { OAuthError } from "../errors";
import type { GrantRequest } from "./types";

/** What a grant issues tokens with inside its transaction: `db` is the transaction. */
export type IssueEnv = {
  db: Executor;
  masterKey: Buffer;
  issuer: string;
  caches: Caches;
  signingKey: ActiveKey;
  primaryDomain: string;
};

/**
 * A refusal whose writes must still be committed: a replayed code or a reused refresh token
 * revokes what was issued from it, and that revocation must survive the error answer. Returned
 * from the transaction's function, thrown once the transaction has committed.
 */
export class CommittedRefusal {
  constructor(readonly error: OAuthError) {}
}

/**
 * Runs a grant in one database transaction: the code marked used or the refresh token rotated,
 * the grant, the tokens and the audit event commit together or not at all, so a failure half-way
 * (database error, process killed) leaves the code or refresh token usable for the retry.
 *
 * The per-process caches (signing key, settings) are read before the transaction opens and passed
 * in: a cache must not be filled from a transaction that may still roll back, and on PGlite (one
 * connection) a read outside the transaction would wait for it to end.
 */
export async function grantTransaction<T>(g: GrantRequest, fn: (env: IssueEnv) => Promise<T | CommittedRefusal>): Promise<T> {
  const signingKey = await activeSigningKey(g);
  const outcome = await g.db.transaction((tx) =>
    fn({ db: tx, masterKey: g.masterKey, issuer: g.issuer, caches: g.caches, signingKey, primaryDomain: g.settings.primaryDomain }),
  );
  if (outcome instanceof CommittedRefusal) throw outcome.error;
  return outcome;
}
