import type { ZodType } from "zod";
import type { PasswordPolicy, RegistrationNames } from "@/db/schema";
import type { Executor } from "@/lib/db/client";
import { checkPasswordPolicy, hashPassword, type PolicyViolation } from "@/lib/passwords";
import { DuplicateUsername, insertUser, usersWithNameOrEmail, type User } from "@/lib/store/users";
import { email, personNameFault, registeredUsername } from "@/lib/users/fields";

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

/**
 * `names`: whether the page asks for the given and family name (required, optional, or not at
 * all, when whatever was sent is ignored).
 */
export function validateRegistration(input: RegistrationInput, policy: PasswordPolicy, names: RegistrationNames = "required"): RegistrationError[] {
  const errors: RegistrationError[] = [];
  // The sign-up page states each rule in its message, so any refusal of a field gets that one key;
  // a name is refused for its length or for characters a page cannot show (lib/text/shown-text.ts).
  const check = (field: "username" | "email" | "givenName" | "familyName", schema: ZodType, required: string, invalid: string) => {
    if (!input[field]) errors.push({ field, key: required });
    else if (!schema.safeParse(input[field]).success) errors.push({ field, key: invalid });
  };
  check("username", registeredUsername, "usernameRequired", "usernameInvalid");
  check("email", email, "emailRequired", "emailInvalid");
  for (const [field, required] of [["givenName", "givenNameRequired"], ["familyName", "familyNameRequired"]] as const) {
    if (names === "hidden") continue;
    if (names === "optional" && !input[field]) continue;
    const fault = input[field] ? personNameFault(input[field]) : null;
    if (!input[field]) errors.push({ field, key: required });
    else if (fault) errors.push({ field, key: fault === "tooLong" ? "tooLong" : "nameCharacters" });
  }
  const violations = checkPasswordPolicy(input.password, policy);
  if (violations.length) errors.push({ field: "password", key: "passwordPolicy", violations });
  else if (input.password !== input.passwordConfirmation) errors.push({ field: "passwordConfirmation", key: "passwordMismatch" });
  return errors;
}

export type RegistrationOutcome =
  | { ok: false; errors: RegistrationError[] }
  | { ok: true; created: User }
  /** The username or email belongs to these users already; nothing was created. */
  | { ok: true; taken: { userIds: string[]; matched: ("username" | "email")[] } };

/**
 * Creates the self-registered user, unless the username or the email is in use already. The
 * caller answers both alike (user enumeration): a taken name or email costs the same password hash
 * a new account does and is told apart only in the audit log, where `user.registration.duplicate`
 * is the event a mailer can act on to tell the existing owner.
 */
export async function registerUser(db: Executor, input: RegistrationInput, policy: PasswordPolicy, names: RegistrationNames = "required"): Promise<RegistrationOutcome> {
  const errors = validateRegistration(input, policy, names);
  if (errors.length) return { ok: false, errors };
  const existing = await usersHolding(db, input.username, input.email);
  if (existing.userIds.length) {
    await hashPassword(input.password);
    return { ok: true, taken: existing };
  }
  try {
    const user = await insertUser(
      db,
      {
        type: "human",
        username: input.username,
        email: input.email,
        givenName: names === "hidden" ? null : input.givenName || null,
        familyName: names === "hidden" ? null : input.familyName || null,
      },
      input.password,
    );
    return { ok: true, created: user };
  } catch (err) {
    // Registered by someone else in the meantime: the same answer as a name taken before.
    if (err instanceof DuplicateUsername) return { ok: true, taken: await usersHolding(db, input.username, input.email) };
    throw err;
  }
}

async function usersHolding(db: Executor, name: string, mail: string): Promise<{ userIds: string[]; matched: ("username" | "email")[] }> {
  const rows = await usersWithNameOrEmail(db, name, mail);
  const matched = new Set<"username" | "email">();
  for (const r of rows) {
    if (r.username.toLowerCase() === name.toLowerCase()) matched.add("username");
    if (r.email && r.email.toLowerCase() === mail.toLowerCase()) matched.add("email");
  }
  return { userIds: rows.map((r) => r.id), matched: [...matched] };
}
