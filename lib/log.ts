import pino from "pino";
import { errorForLog } from "./log-errors";

export type Logger = pino.Logger;
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

/** Structured JSON logs on stdout; the engine owns one (lib/engine.ts). */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    base: { service: "torii" },
    redact: ["password", "clientSecret", "token", "*.password", "*.clientSecret"],
    // Failed queries log their class and a query name, never their parameters (lib/log-errors.ts).
    serializers: { err: errorForLog, error: errorForLog },
  });
}
