import { loadConfig } from "@/lib/config";
import { createTorii, type Engine } from "@/lib/engine";
import type { HttpRequest } from "@/lib/http/request";

/**
 * The engine of this process, for the edge only: route modules, server actions and the custom
 * server (server.ts) read it here once per request and pass it down; nothing in the core imports
 * this module. It is the one piece of module state the core has, and it is shared by server.ts and
 * Next's route modules because both load the core from the one compiled package
 * (node_modules/@torii/core, docs/architecture.md).
 *
 * server.ts creates the engine and hands it over with `adoptEngine`; under `next dev` (no custom
 * server) the first request creates it from the environment.
 */
let current: Promise<Engine> | undefined;

export function torii(): Promise<Engine> {
  current ??= createTorii(loadConfig(process.env)).catch((err: unknown) => {
    current = undefined;
    throw err;
  });
  return current;
}

export function adoptEngine(engine: Engine): void {
  current = Promise.resolve(engine);
}

/** Closes this process's engine (shutdown). */
export async function closeTorii(): Promise<void> {
  const p = current;
  current = undefined;
  if (p) await (await p).close();
}

/** A route handler of the core, `(engine, request)`, as Next's `(request)`. */
export function withEngine(handler: (engine: Engine, request: HttpRequest) => Promise<Response>): (request: HttpRequest) => Promise<Response> {
  return async (request) => handler(await torii(), request);
}
