import type { Engine } from "@/lib/engine";
import { pendingMigrations } from "@/lib/db/migrate";
import { json, NO_STORE } from "@/lib/http/responses";

/** GET /healthz: the process answers. Deliberately touches nothing else. */
export function handleHealthz(): Promise<Response> {
  return Promise.resolve(json({ status: "ok" }, 200, NO_STORE));
}

/** GET /readyz: the database answers and every migration has been applied. */
export async function handleReadyz(inst: Engine): Promise<Response> {
  try {
    const pending = await pendingMigrations(inst.database);
    if (pending > 0) return json({ status: "not_ready", reason: `${pending} migrations pending` }, 503, NO_STORE);
    return json({ status: "ready", database: inst.database.kind }, 200, NO_STORE);
  } catch {
    return json({ status: "not_ready", reason: "database unreachable" }, 503, NO_STORE);
  }
}
