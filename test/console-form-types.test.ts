import { describe, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import type { FormBody, SettingsGroup } from "@/lib/console/forms";
import type { ClientCreate } from "@/lib/management/clients";
import type { ManagementOperations } from "@/lib/management/api-routes";

/**
 * The console's form bodies are the management API's own body types (lib/console/forms.ts
 * FormBody): these assertions are checked by `npm run typecheck` (tsc reads the test files), so a
 * field renamed or removed in a schema breaks the console's build, not a user's form.
 */
describe("console form bodies follow the management API's schemas", () => {
  it("an application form has exactly the fields of ClientCreate", () => {
    expectTypeOf<keyof FormBody<"createClient">>().toEqualTypeOf<keyof z.input<typeof ClientCreate>>();
    // Where the schema wants a number or a word, the administrator's text may stand (the API refuses it with its message).
    expectTypeOf<FormBody<"createClient">["accessTokenLifetime"]>().toEqualTypeOf<number | string | undefined>();
    // @ts-expect-error: a field the API does not have is not a field of the form
    expectTypeOf<FormBody<"createClient">>().toHaveProperty("clientName");
  });

  it("the user forms are the union of the human and machine bodies; the update body is the route's documented one", () => {
    expectTypeOf<FormBody<"createUser">>().toHaveProperty("username");
    expectTypeOf<Extract<FormBody<"updateUser">, { description?: unknown }>>().not.toBeNever();
    expectTypeOf<ManagementOperations["updateUser"]["body"]>().not.toBeUndefined();
  });

  it("the settings form's groups are the nested objects of SettingsUpdate", () => {
    expectTypeOf<SettingsGroup>().toEqualTypeOf<"lifetimes" | "rateLimits" | "lockoutPolicy" | "passwordPolicy" | "retention" | "registration" | "passwordReset">();
  });
});
