import { handleManagement } from "@/lib/management/router";

// The same Web handler that server.ts serves directly; this mount serves it under `next dev`.
export const dynamic = "force-dynamic";
export const GET = handleManagement;
export const POST = handleManagement;
export const PUT = handleManagement;
export const PATCH = handleManagement;
export const DELETE = handleManagement;
