import fs from "node:fs";
import path from "node:path";
import { advisoryXactLock, type Db } from "@/lib/db/client";
import { hmac } from "@/lib/crypto";
import { createInitialSigningKey } from "@/lib/keys/signing-keys";
import { generatePassword } from "@/lib/passwords";
import { recordAudit, SYSTEM } from "@/lib/store/audit";
import { generatePat, insertPat } from "@/lib/store/pats";
import { defaultSettings, insertSettings, readSettings } from "@/lib/store/settings";
import { insertUser } from "@/lib/store/users";

const BOOTSTRAP_LOCK = 72_690_003;
const MASTER_KEY_CHECK = "torii master key check v1";

export class MasterKeyMismatchError extends Error {
  constructor() {
    super(
      "Configuration error: IDP_MASTER_KEY does not match the key this database was set up with (set the same IDP_MASTER_KEY on every instance, or point IDP_DATA_DIR at the folder holding master.key)",
    );
  }
}

export type BootstrapResult =
  | { created: false }
  | { created: true; adminPassword: string; adminPat: string; adminPatGenerated: boolean };

export const ADMIN_USERNAME = "admin";

/**
 * Sets up an empty database once: settings, the first signing key, the administrator and its PAT.
 * Runs under an advisory lock so that instances starting together bootstrap exactly once; a
 * restart finds the settings row and changes nothing.
 */
export async function bootstrap(
  db: Db,
  opts: { issuer: string; masterKey: Buffer; adminPat?: string; dataDir: string },
): Promise<BootstrapResult> {
  const check = hmac(opts.masterKey, MASTER_KEY_CHECK);
  const result = await db.transaction(async (tx): Promise<BootstrapResult> => {
    await advisoryXactLock(tx, BOOTSTRAP_LOCK);
    const existing = await readSettings(tx);
    if (existing) {
      if (existing.masterKeyCheck !== check) throw new MasterKeyMismatchError();
      return { created: false };
    }
    await insertSettings(tx, defaultSettings(opts.issuer, check));
    const kid = await createInitialSigningKey(tx, opts.masterKey);
    const adminPassword = generatePassword();
    const { id: adminId } = await insertUser(
      tx,
      { type: "human", username: ADMIN_USERNAME, givenName: "Instance", familyName: "Administrator", roles: ["admin"] },
      adminPassword,
    );
    const adminPat = opts.adminPat ?? generatePat();
    await insertPat(tx, adminId, adminPat);
    await recordAudit(tx, SYSTEM, {
      action: "instance.bootstrapped",
      targetType: "instance",
      details: { adminUserId: adminId, signingKey: kid },
    });
    // The credentials are written before the transaction commits: if writing fails, nothing is
    // committed and the next start bootstraps afresh; a crash after writing but before the commit
    // leaves files that the next start overwrites. Never a bootstrapped database whose
    // administrator password nobody has.
    writeSecretFile(path.join(opts.dataDir, "admin-password"), adminPassword);
    if (!opts.adminPat) writeSecretFile(path.join(opts.dataDir, "admin.pat"), adminPat);
    return { created: true, adminPassword, adminPat, adminPatGenerated: !opts.adminPat };
  });
  return result;
}

export function writeSecretFile(file: string, value: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, value + "\n", { mode: 0o600 });
  fs.chmodSync(file, 0o600); // writeFileSync keeps the mode of an existing file
}
