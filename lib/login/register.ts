import type { ZodType } from "zod";
import type { PasswordPolicy } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { checkPasswordPolicy, type PolicyViolation } from "@/lib/passwords";
import { DuplicateUsername, insertUser, type User } from "@/lib/store/users";
import { email, personName, registeredUsername } from "@/lib/users/fields";

export type RegistrationInput = {
  username: string;
  email: string;
  givenName: string;
  familyName: string;
  password: string;
  passwordConfirmation: string;
};

/** A field and the message key that explains what is wrong with it. */
export type RegistrationError = { field: keyof RegistrationInput; key: string; violations?: PolicyViolation[] };

export function validateRegistration(input: RegistrationInput, policy: PasswordPolicy): RegistrationError[] {
  const errors: RegistrationError[] = [];
  // The sign-up page states each rule in its message, so any refusal of a field gets that one key;
  // a name can only be refused for its length.
  const check = (field: "username" | "email" | "givenName" | "familyName", schema: ZodType, required: string, invalid: string) => {
    if (!input[field]) errors.push({ field, key: required });
    else if (!schema.safeParse(input[field]).success) errors.push({ field, key: invalid });
  };
  check("username", registeredUsername, "usernameRequired", "usernameInvalid");
  check("email", email, "emailRequired", "emailInvalid");
  check("givenName", personName, "givenNameRequired", "tooLong");
  check("familyName", personName, "familyNameRequired", "tooLong");
  const violations = checkPasswordPolicy(input.password, policy);
  if (violations.length) errors.push({ field: "password", key: "passwordPolicy", violations });
  else if (input.password !== input.passwordConfirmation) errors.push({ field: "passwordConfirmation", key: "passwordMismatch" });
  return errors;
}

/** Creates the self-registered user; a taken username is reported as a field error. */
export async function registerUser(
  db: Executor,
  input: RegistrationInput,
  policy: PasswordPolicy,
): Promise<{ ok: true; user: User } | { ok: false; errors: RegistrationError[] }> {
  const errors = validateRegistration(input, policy);
  if (errors.length) return { ok: false, errors };
  try {
    const user = await insertUser(
      db,
      { type: "human", username: input.username, email: input.email, givenName: input.givenName, familyName: input.familyName },
      input.password,
    );
    return { ok: true, user };
  } catch (err) {
    if (err instanceof DuplicateUsername) return { ok: false, errors: [{ field: "username", key: "usernameTaken" }] };
    throw err;
  }
}
