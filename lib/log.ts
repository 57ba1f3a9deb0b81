import pino from "pino";

const LOGGER = Symbol.for("torii.logger");
type G = typeof globalThis & { [LOGGER]?: pino.Logger };

/** Structured JSON logs on stdout (one logger per process, shared by both bundle copies). */
export function log(): pino.Logger {
  const g = globalThis as G;
  return (g[LOGGER] ??= pino({
    level: process.env.IDP_LOG_LEVEL ?? "info",
    base: { service: "torii" },
    redact: ["password", "clientSecret", "token", "*.password", "*.clientSecret"],
  }));
}
