import type { Engine } from "@/lib/engine";
import { handleAppCallback, handleAppSignIn, handleAppSignOut } from "@/lib/first-party/app-routes";
import { CONSOLE_APP } from "./client";
import type { HttpRequest } from "@/lib/http/request";

/** GET /ui/console/signin: starts the console's code flow at the authorization endpoint. */
export const handleConsoleSignIn = (inst: Engine, request: HttpRequest) => handleAppSignIn(inst, CONSOLE_APP, request);

/** GET /ui/console/callback: the console client's redirect URI. */
export const handleConsoleCallback = (inst: Engine, request: HttpRequest) => handleAppCallback(inst, CONSOLE_APP, request);

/**
 * POST /ui/console/signout: ends the console session and the login session behind it (so that
 * the next visit asks for the password again), with the console's CSRF token.
 */
export const handleConsoleSignOut = (inst: Engine, request: HttpRequest) => handleAppSignOut(inst, CONSOLE_APP, request, "console.signed_out");
