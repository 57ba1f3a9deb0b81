import type { PasswordPolicy } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { checkPasswordPolicy, type PolicyViolation } from "@/lib/passwords";
import { DuplicateUsername, insertUser, type User } from "@/lib/store/users";

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

const USERNAME = /^[A-Za-z0-9._+@-]{2,64}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;

export function validateRegistration(input: RegistrationInput, policy: PasswordPolicy): RegistrationError[] {
  const errors: RegistrationError[] = [];
  if (!input.username) errors.push({ field: "username", key: "usernameRequired" });
  else if (!USERNAME.test(input.username)) errors.push({ field: "username", key: "usernameInvalid" });
  if (!input.email) errors.push({ field: "email", key: "emailRequired" });
  else if (input.email.length > 254 || !EMAIL.test(input.email)) errors.push({ field: "email", key: "emailInvalid" });
  if (!input.givenName) errors.push({ field: "givenName", key: "givenNameRequired" });
  else if (input.givenName.length > 100) errors.push({ field: "givenName", key: "tooLong" });
  if (!input.familyName) errors.push({ field: "familyName", key: "familyNameRequired" });
  else if (input.familyName.length > 100) errors.push({ field: "familyName", key: "tooLong" });
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
