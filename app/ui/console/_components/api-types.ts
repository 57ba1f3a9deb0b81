import type { ManagementOperations } from "@torii/core/management/api-routes";

/**
 * What the console shows, as the management API answers it: each type is an operation's response
 * schema (lib/management/*.ts), so a page and the API cannot disagree on a field.
 */
export type ApiResponse<O extends keyof ManagementOperations> = ManagementOperations[O]["response"];

export type ClientData = ApiResponse<"getClient">;
export type UserData = ApiResponse<"getUser">;
export type AuditEvent = ApiResponse<"listAuditEvents">["events"][number];
export type SettingsData = ApiResponse<"getSettings">;
export type ApiData = ApiResponse<"getApi">;
export type RoleMapData = ApiResponse<"getUserRoles">;
