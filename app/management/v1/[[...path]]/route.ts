import { withEngine } from "@torii/core/runtime";
import { handleManagement } from "@torii/core/management/router";

// The same Web handler that server.ts serves directly; this mount serves it under `next dev`.
export const dynamic = "force-dynamic";
export const GET = withEngine(handleManagement);
export const POST = withEngine(handleManagement);
export const PUT = withEngine(handleManagement);
export const PATCH = withEngine(handleManagement);
export const DELETE = withEngine(handleManagement);
