import pino from "pino";
import { errorForLog } from "./log-errors";

const LOGGER = Symbol.for("torii.logger");
type G = typeof globalThis & { [LOGGER]?: pino.Logger };

/** Structured JSON logs on stdout (one logger per process, shared by both bundle copies). */
export function log(): pino.Logger {
  const g = globalThis as G;
  return (g[LOGGER] ??= pino({
    level: process.env.IDP_LOG_LEVEL ?? "info",
    base: { service: "torii" },
    redact: ["password", "clientSecret", "token", "*.password", "*.clientSecret"],
    // Failed queries log their class and a query name, never their parameters (lib/log-errors.ts).
    serializers: { err: errorForLog, error: errorForLog },
  }));
}
