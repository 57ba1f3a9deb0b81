import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { decodeKey } from "@/lib/config";
import { writeSecretFile } from "@/lib/bootstrap";

/**
 * The key that encrypts private signing keys at rest: IDP_MASTER_KEY, else `<data dir>/master.key`,
 * generated on first start. Several instances on one PostgreSQL must share it (bootstrap checks).
 */
export function resolveMasterKey(configured: Buffer | undefined, dataDir: string): Buffer {
  if (configured) return configured;
  const file = path.join(dataDir, "master.key");
  if (fs.existsSync(file)) {
    const key = decodeKey(fs.readFileSync(file, "utf8"));
    if (!key) throw new Error(`Configuration error: ${file} does not hold a 32-byte key (64 hex characters)`);
    return key;
  }
  const key = randomBytes(32);
  writeSecretFile(file, key.toString("hex"));
  return key;
}
